package sim_test

import (
	"fmt"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
)

// Example runs a small chat workload and prints a few of the numbers a
// Result holds. Steps are priced by a linear model with whole-microsecond
// coefficients (3 ms a step plus 20 µs a prefill token and 50 µs a decoding
// sequence), and the default front end tokenizes each prompt serially at
// 10 µs a token (sim.DefaultServer), so the printed times are exact on
// every platform.
func Example() {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear = cost.LinearConfig{C0US: 3000, C1USPerPrefillToken: 20, C2USPerDecodeSeq: 50}
	cfg.Workload.Requests = 100
	cfg.Workload.Rate = 5
	cfg.Workload.InputLen = workloads.MustParseDist("uniform:100,500")
	cfg.Workload.OutputLen = workloads.MustParseDist("fixed:50")

	e, err := sim.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := e.Run()

	var maxTTFT sim.Time
	for _, s := range r.Streams.All() {
		maxTTFT = max(maxTTFT, s.TTFT)
	}
	fmt.Printf("finished %d of %d requests, %d output tokens\n", r.Finished, r.Requests, r.OutputTokens)
	fmt.Printf("gaps: median %.2f ms, max %.2f ms\n", r.Pooled.Quantile(0.5)/1e6, sim.Time(r.Pooled.Max).MS())
	fmt.Printf("worst TTFT %.2f ms\n", maxTTFT.MS())
	// Output:
	// finished 100 of 100 requests, 5000 output tokens
	// gaps: median 3.10 ms, max 12.56 ms
	// worst TTFT 21.92 ms
}
