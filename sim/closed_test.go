package sim_test

import (
	"math"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
)

// TestClosedLoop: with N users thinking Z seconds between requests, the
// throughput X obeys Little's law, N = X·(Z + R), R the mean time in the
// system (E2EL); more users than the server can take saturate it; and
// every request ends.
func TestClosedLoop(t *testing.T) {
	run := func(users int, think float64) reports.Summary {
		cfg := sim.DefaultConfig()
		cfg.Workload.Arrival = "closed"
		cfg.Workload.Users = users
		cfg.Workload.ThinkS = think
		cfg.Workload.Requests = 3000
		e, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for e.Step() {
			if err := e.Check(); err != nil {
				t.Fatal(err)
			}
			if n := e.Replica().Active(); n > users {
				t.Fatalf("%d requests in the system with %d users", n, users)
			}
		}
		s := reports.Summarize(e.Result(), cfg.Metrics)
		if s.Finished+s.Rejected != 3000 {
			t.Fatalf("%d finished + %d rejected of 3000", s.Finished, s.Rejected)
		}
		return s
	}
	for _, c := range []struct {
		users int
		think float64
	}{{8, 2}, {32, 1}, {64, 0.5}} {
		s := run(c.users, c.think)
		little := s.RequestsPerS * (c.think + s.E2EL.Mean/1000)
		if math.Abs(little/float64(c.users)-1) > 0.05 {
			t.Errorf("%d users, %g s think: X·(Z+R) = %.2f × (%.2f + %.2f) = %.2f, want %d ± 5 %%",
				c.users, c.think, s.RequestsPerS, c.think, s.E2EL.Mean/1000, little, c.users)
		}
	}
	few, many := run(16, 0), run(512, 0)
	if many.RequestsPerS < 1.5*few.RequestsPerS || many.TTFT.Mean < 5*few.TTFT.Mean {
		t.Errorf("512 users: %.1f req/s, TTFT %.0f ms; 16 users: %.1f req/s, TTFT %.0f ms; want more throughput and much longer queues",
			many.RequestsPerS, many.TTFT.Mean, few.RequestsPerS, few.TTFT.Mean)
	}
}
