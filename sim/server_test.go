package sim_test

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// TestServerFrontEnd: the fixed overhead adds to every TTFT; the serial
// stage makes requests that arrive together queue for it.
func TestServerFrontEnd(t *testing.T) {
	ttfts := func(fixed, serial float64) []sim.Time {
		cfg := linearConfig(1000, 0)
		cfg.Server = sim.ServerConfig{RequestOverheadMS: fixed, SerialMSPerRequest: serial}
		res := replay(t, cfg, req(0, 16, 2), req(0, 16, 2), req(0, 16, 2)).Run()
		var out []sim.Time
		for _, s := range res.Streams.All() {
			out = append(out, s.TTFT)
		}
		return out
	}
	base, fixed, serial := ttfts(0, 0), ttfts(5, 0), ttfts(0, 2)
	for i := range base {
		if fixed[i] != base[i]+5*sim.Millisecond {
			t.Errorf("request %d: TTFT %v with a 5 ms overhead, %v without", i, fixed[i], base[i])
		}
	}
	if serial[0] < 2*sim.Millisecond || serial[2] < 6*sim.Millisecond {
		t.Errorf("TTFTs %v with a 2 ms serial stage, want the third ≥ 6 ms", serial)
	}
	cfg := sim.DefaultConfig()
	cfg.Server.SerialMSPerRequest = -1
	if err := cfg.Validate(); err == nil {
		t.Error("a negative serial_ms_per_request passed validation")
	}
}

// TestServerFrontEndPerToken: tokenization is serial work per prompt
// token, so a burst's later requests wait for the earlier prompts; with
// two replicas there are two serial stages and the burst clears in half
// the time. Ready times stay in arrival order.
func TestServerFrontEndPerToken(t *testing.T) {
	ttfts := func(perToken float64, replicas int) []sim.Time {
		cfg := linearConfig(1000, 0)
		cfg.Server = sim.ServerConfig{SerialUSPerPromptToken: perToken}
		if replicas > 1 {
			cfg.Cluster.Replicas = replicas
		}
		res := replay(t, cfg, req(0, 1000, 2), req(0, 1000, 2), req(0, 1000, 2), req(0, 1000, 2)).Run()
		out := make([]sim.Time, res.Streams.Len())
		for i := range res.Streams.Len() {
			s := res.Streams.At(i)
			out[s.ID] = s.TTFT
		}
		return out
	}
	base, one := ttfts(0, 1), ttfts(10, 1) // 10 µs × 1,000 tokens = 10 ms each
	for i := range base {
		if want := sim.Time(i+1) * 10 * sim.Millisecond; one[i] < base[i]+want-sim.Millisecond {
			t.Errorf("request %d: TTFT %v with 10 ms of serial tokenization each, %v without; want ≥ %v more", i, one[i], base[i], want)
		}
	}
	two := ttfts(10, 2)
	if !(two[3] < one[3]) || two[3] < 20*sim.Millisecond {
		t.Errorf("last TTFT %v with two front ends, %v with one: want less, and ≥ 20 ms (two requests per stage)", two[3], one[3])
	}
	cfg := sim.DefaultConfig()
	cfg.Server.SerialUSPerPromptToken = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "server.serial_us_per_prompt_token") {
		t.Errorf("a negative serial_us_per_prompt_token: %v, want an error naming the field", err)
	}
}
