package study

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
)

type countSink struct{ n int }

func (c *countSink) Stream(*sim.Timeline) { c.n++ }

func variantConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = 40
	return cfg
}

// With qoe every ended stream is scored and its timeline still reaches
// next; without, nothing is scored.
func TestRunScored(t *testing.T) {
	for _, qoe := range []bool{true, false} {
		e, err := sim.New(variantConfig())
		if err != nil {
			t.Fatal(err)
		}
		next := &countSink{}
		res, err := RunScored(e, qoe, next)
		if err != nil {
			t.Fatal(err)
		}
		if next.n != res.Requests || res.Requests != 40 {
			t.Errorf("qoe %v: next saw %d timelines of %d requests, want all 40", qoe, next.n, res.Requests)
		}
		scored := 0
		for _, st := range res.Streams.All() {
			if st.Scored {
				scored++
			}
		}
		if want := map[bool]int{true: res.Finished, false: 0}[qoe]; scored != want || res.Finished == 0 {
			t.Errorf("qoe %v: %d streams scored of %d finished, want %d", qoe, scored, res.Finished, want)
		}
		run := RunReport(e, "a", map[string]string{"seed": "1"}, res, false)
		if run.Name != "a" || run.Summary.Requests != 40 || run.Overrides["seed"] != "1" {
			t.Errorf("qoe %v: report %q of %d requests, overrides %v", qoe, run.Name, run.Summary.Requests, run.Overrides)
		}
	}
}
