package sim_test

import (
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
