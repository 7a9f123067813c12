package workloads_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/itlsim/itlsim/workloads"
)

func Example() {
	c := workloads.DefaultConfig()
	c.Arrival = workloads.ArrivalConstant // evenly spaced, to make the times easy to read
	c.Rate = 4                            // requests per second: one every 250 ms
	c.Requests = 3
	c.InputLen = workloads.MustParseDist("fixed:512")
	c.OutputLen = workloads.MustParseDist("uniform:100,200")

	src, err := workloads.New(c, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	var r workloads.Request
	for src.Next(&r) {
		fmt.Printf("request %d at %3d ms: %d in, %d out\n", r.ID, r.Arrival/1e6, r.InputTokens, r.OutputTokens)
	}
	// Output:
	// request 0 at   0 ms: 512 in, 165 out
	// request 1 at 250 ms: 512 in, 193 out
	// request 2 at 500 ms: 512 in, 126 out
}

func ExampleParseDist() {
	d, err := workloads.ParseDist("lognormal:256,256,16,1024")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: mean %.0f, at most %d\n", d, d.Mean(), d.Max())

	_, err = workloads.ParseDist("normal:1,2")
	fmt.Println(err)
	// Output:
	// lognormal:256,256,16,1024: mean 248, at most 1024
	// normal: expected MEAN,SD,MIN,MAX, got "1,2"
}

func ExampleConfig_Validate() {
	c := workloads.DefaultConfig()
	c.Rate = -3
	fmt.Println(c.Validate())
	// Output:
	// workload.rate: must be > 0 and finite (requests per second), got -3
}

func ExampleReadRequests() {
	const trace = `{"timestamp": 0, "input_length": 1100, "output_length": 52, "hash_ids": [46, 47, 48]}
{"timestamp": 1500, "input_length": 700, "output_length": 9, "hash_ids": [46, 49]}
`
	reqs, err := workloads.ReadRequests(strings.NewReader(trace), "mooncake.jsonl", workloads.FormatMooncake)
	if err != nil {
		fmt.Println(err)
		return
	}
	w := workloads.NewRequestWriter(os.Stdout, false) // itlsim's format, as CSV
	for i := range reqs {
		w.Write(&reqs[i])
	}
	w.Flush()

	_, err = workloads.ReadRequests(strings.NewReader(`{"timestamp": 0, "input_length": -5}`), "bad.jsonl", workloads.FormatMooncake)
	fmt.Println(err)
	// Output:
	// arrival_s,input_tokens,output_tokens,class,priority,prefix_blocks,prefix_block_tokens
	// 0.000000000,1100,52,,0,46 47 48,512
	// 1.500000000,700,9,,0,46 49,512
	// bad.jsonl:1: input_length: expected a positive integer ≤ 2147483647, got "-5"
}

func ExampleConfig_bursty() {
	c := workloads.DefaultConfig()
	c.Arrival, c.CV = workloads.ArrivalGamma, 4 // four times as bursty as Poisson
	c.RateCurve = "onoff:2,8"                   // 2 s bursts every 10 s
	c.Rate, c.Requests = 5, 4
	c.InputLen = workloads.MustParseDist("table:128=0.5,2048=0.5")
	c.WindowS = workloads.Window{Start: 0, End: 60} // transformations apply to generated workloads too
	fmt.Println(c.Validate())
	// Output:
	// <nil>
}
