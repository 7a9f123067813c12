package slo_test

import (
	"fmt"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
)

// Judge the layered SLO users write on a run's summary.
func Example() {
	r := &sim.Result{Requests: 4, Finished: 4, Duration: sim.Second}
	for i, ttft := range []sim.Time{100, 150, 180, 400} {
		r.Streams.Append(sim.StreamSummary{ID: i, OutputTokens: 11, Chunks: 11, Class: -1,
			TTFT: ttft * sim.Millisecond, E2EL: (ttft + 150) * sim.Millisecond, GapP50: 15e6, GapP99: 15e6, GapMax: 15 * sim.Millisecond})
	}
	s := reports.Summarize(r, sim.DefaultConfig().Metrics)
	terms, err := slo.ParseAll([]string{"ttft:p95<=200ms", "tpot:mean<=15ms", "itl-goodput>=99%@400ms"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := slo.Evaluate(terms, &s)
	for _, o := range out {
		fmt.Printf("%s: pass %v, value %.1f %s\n", o.Term, o.Pass, *o.Value, o.Unit)
	}
	fmt.Println("all pass:", slo.Pass(out), "limiting:", out[slo.Limiting(out)].Term)
	// Output:
	// ttft:p95<=200ms: pass false, value 367.0 ms
	// tpot:mean<=15ms: pass true, value 15.0 ms
	// itl-goodput>=99%@400ms: pass true, value 1.0 share
	// all pass: false limiting: ttft:p95<=200ms
}
