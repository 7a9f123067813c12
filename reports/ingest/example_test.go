package ingest_test

import (
	"fmt"
	"os"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// Parse a vLLM benchmark result and summarize it with the simulator's
// metric definitions: pooled ITL is vLLM's view, the per-stream max gap
// shows the 500 ms pause one stream suffered.
func ExampleParse() {
	data, err := os.ReadFile("testdata/vllm_small.json")
	if err != nil {
		panic(err)
	}
	recs, err := ingest.Parse("vllm_small.json", data, "") // format detected: vllm
	if err != nil {
		panic(err)
	}
	m := sim.DefaultConfig().Metrics
	s := reports.Summarize(recs[0].Result(m), m)
	fmt.Printf("%s: %d of %d requests finished, %d failed\n", recs[0].Format, s.Finished, s.Requests, s.Failed)
	fmt.Printf("pooled ITL p50 %.1f ms; worst stream's max gap %.1f ms; ITL goodput %.0f%%\n",
		s.ITLPooled.P50, s.StreamMaxGap.Max, s.ITLGoodput*100)
	// Output:
	// vllm: 3 of 4 requests finished, 1 failed
	// pooled ITL p50 20.0 ms; worst stream's max gap 500.0 ms; ITL goodput 67%
}
