package delivery_test

import (
	"fmt"

	"github.com/itlsim/itlsim/sim/delivery"
)

// A stream whose server paused 300 ms, delivered to a client with a 33 ms
// smoothing buffer 500 ms deep: the pause disappears from the client's view
// at the cost of a 500 ms start-up delay.
func ExamplePath_Deliver() {
	cfg := delivery.DefaultConfig()
	cfg.Smoothing = delivery.Smoothing{CadenceMS: 33, DepthMS: 500}
	path, err := delivery.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	const ms = 1_000_000
	req := delivery.Request{Seed: 1, Arrival: 0, PromptTokens: 512}
	t := int64(80 * ms)
	for i := range 100 {
		req.Chunks = append(req.Chunks, delivery.Chunk{At: t, Tokens: 1})
		t += 20 * ms
		if i == 49 {
			t += 300 * ms
		}
	}
	var st delivery.Stream // scratch, reused across streams
	var out delivery.Result
	path.Deliver(&st, req, &out)

	var worst int64
	for k := 1; k < len(out.Client); k++ {
		worst = max(worst, out.Client[k].At-out.Client[k-1].At)
	}
	fmt.Printf("server: 100 chunks, largest gap 320 ms, first at 80 ms\n")
	fmt.Printf("client: %d chunks, largest gap %d ms, first at %d ms (start-up delay %d ms)\n",
		len(out.Client), worst/ms, out.Client[0].At/ms, out.StartupDelay/ms)
	fmt.Printf("first gap: %v (server, network, packet-loss, connection, smoothing-delay, failover; ns)\n", out.Parts[0])
	// Output:
	// server: 100 chunks, largest gap 320 ms, first at 80 ms
	// client: 62 chunks, largest gap 33 ms, first at 580 ms (start-up delay 500 ms)
	// first gap: [20000000 0 0 0 13000000 0] (server, network, packet-loss, connection, smoothing-delay, failover; ns)
}

// The network profiles and their parameters.
func ExampleProfiles() {
	for _, p := range delivery.Profiles() {
		n := p.Network
		fmt.Printf("%-10s base %5.2f ms, jitter %-20s loss %5.3f, drops %.4f/s, reconnect %s\n",
			p.Name, n.BaseMS, n.JitterMS, n.Loss, n.DropsPerS, n.ReconnectMS)
	}
	// Output:
	// broadband  base 12.00 ms, jitter exp:2                loss 0.001, drops 0.0001/s, reconnect lognormal:500,300,10000
	// datacenter base  0.25 ms, jitter exp:0.05             loss 0.000, drops 0.0000/s, reconnect none
	// flaky-wifi base  8.00 ms, jitter pareto:1,1.2,2000    loss 0.030, drops 0.0100/s, reconnect lognormal:3000,2000,60000
	// mobile-4g  base 35.00 ms, jitter lognormal:10,15,2000 loss 0.010, drops 0.0020/s, reconnect lognormal:1500,1000,30000
}
