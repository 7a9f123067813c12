package scenario_test

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// TestBuild: a scenario file's compare list, a field flag's comma list and
// --vary become runs; a flag's duration takes a unit; a duration given
// without a request count runs for that long; a field set twice is an
// error naming both flags; Adjust sees who set what.
func TestBuild(t *testing.T) {
	file := []byte("seed: 3\ncompare:\n  - scheduler.policy=chunked,orca\n")
	var sawSeed string
	b, err := scenario.Build(scenario.CommandLine{
		Path: "s.yaml", Data: file,
		Fields: []scenario.FieldValue{
			{Flag: "tp", Path: "tp", Value: "1,2", List: true},
			{Flag: "duration", Path: "workload.duration_s", Value: "2m", List: true},
		},
		Sets: []string{"seed=9"},
		Vary: []string{"workload.rate=4,8"},
		Adjust: func(_ *sim.Config, setBy map[string]string) error {
			sawSeed = setBy["seed"]
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Variants); n != 8 {
		t.Fatalf("%d runs, want 2 policies × 2 tp × 2 rates", n)
	}
	v := b.Variants[0].Config
	if v.Seed != 9 || v.Workload.DurationS != 120 || v.Workload.Requests != 0 {
		t.Errorf("seed %d, duration %g s, requests %d; want 9, 120, 0", v.Seed, v.Workload.DurationS, v.Workload.Requests)
	}
	if sawSeed != "--set seed=9" {
		t.Errorf("Adjust saw seed set by %q", sawSeed)
	}
	if !b.SetsField("tp") || !b.SetsField("workload.rate") || b.SetsField("model") {
		t.Error("SetsField: want tp and workload.rate set, model not")
	}

	_, err = scenario.Build(scenario.CommandLine{
		Fields: []scenario.FieldValue{{Flag: "seed", Path: "seed", Value: "5"}},
		Sets:   []string{"seed=6"},
	})
	if err == nil || !strings.Contains(err.Error(), "--set seed=6: seed is already set (by --seed 5)") {
		t.Errorf("a field set twice: %v", err)
	}
	_, err = scenario.Build(scenario.CommandLine{Fields: []scenario.FieldValue{{Flag: "network", Path: "delivery.network.profile", Value: " "}}})
	if err == nil || !strings.Contains(err.Error(), "(none: no network profile)") {
		t.Errorf("an empty value: %v", err)
	}
}
