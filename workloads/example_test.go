package workloads_test

import (
	"fmt"

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
	// request 0 at   0 ms: 512 in, 146 out
	// request 1 at 250 ms: 512 in, 177 out
	// request 2 at 500 ms: 512 in, 142 out
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
