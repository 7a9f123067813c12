package sim_test

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// A cost model inside its documented ranges can still price a step at
// centuries (an efficiency of 1e-12, the largest linear coefficients over
// 100k-token prompts). The clock must not wrap int64 around ("time went
// backwards"): the run stops at the horizon with an error naming the cost
// model.
func TestStepsPastTheHorizonStopTheRun(t *testing.T) {
	cases := map[string]func(*sim.Config){
		"compute efficiency": func(c *sim.Config) { c.Cost.Roofline.ComputeEfficiency = 1e-12 },
		"memory efficiency":  func(c *sim.Config) { c.Cost.Roofline.MemoryEfficiency = 1e-12 },
		"linear maxima": func(c *sim.Config) {
			c.Cost.Model = "linear"
			c.Cost.Linear.C1USPerPrefillToken = 1e6
			c.Cost.Linear.C3USPerDecodeContextToken = 1e6
			c.Cost.Linear.C4USPerPrefillTokenContext = 1e6
		},
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := sim.DefaultConfig()
			cfg.Workload.Requests = 20
			set(&cfg)
			reqs := make([]workloads.Request, 20)
			for i := range reqs {
				reqs[i] = req(sim.Time(i)*sim.Millisecond, 100_000, 64)
			}
			e := replay(t, cfg, reqs...)
			e.Run()
			err := e.Err()
			if err == nil || !strings.Contains(err.Error(), "cost model") {
				t.Fatalf("Err() = %v, want the run stopped at the horizon", err)
			}
			if e.Now() > sim.Horizon || e.Now() < 0 {
				t.Errorf("clock at %d, outside [0, Horizon]", e.Now())
			}
		})
	}
}

func TestTimeAddSaturates(t *testing.T) {
	for _, c := range []struct{ a, b, want sim.Time }{
		{1, 2, 3},
		{sim.MaxTime - 1, 1, sim.MaxTime},
		{sim.MaxTime - 1, 2, sim.MaxTime},
		{sim.MaxTime / 2, sim.MaxTime, sim.MaxTime},
	} {
		if got := c.a.Add(c.b); got != c.want {
			t.Errorf("%d.Add(%d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
