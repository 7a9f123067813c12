package sim_test

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/delivery"
)

func specConfig(method, acceptance string, k int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.SpecDecode.Method, cfg.SpecDecode.K = method, k
	if err := cfg.SpecDecode.Acceptance.UnmarshalText([]byte(acceptance)); err != nil {
		panic(err)
	}
	return cfg
}

func TestSpecBadParameters(t *testing.T) {
	for _, c := range []struct {
		mut  func(*sim.Config)
		want string
	}{
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "llama-3.1-70b" }, "is not smaller than the target"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "llama-3.1-8b" }, "is not smaller"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "qwen2.5-7b"; c.Model = "llama-3.1-70b"; c.TP = 4 }, "vocabulary"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "nope" }, "unknown preset"},
	} {
		cfg := specConfig("draft-model", "iid:0.8", 4)
		c.mut(&cfg)
		if _, err := cfg.Resolve(); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// BenchmarkChatWorkloadSpec is BenchmarkChatWorkload with EAGLE-style
// speculation (k=4, iid α=0.8): the issue asks that speculation cost at
// most 2× the simulator's speed without it.
func BenchmarkChatWorkloadSpec(b *testing.B) {
	cfg := chatConfig(20_000)
	cfg.SpecDecode = specConfig("eagle", "iid:0.8", 4).SpecDecode
	benchmarkChat(b, cfg)
}

// BenchmarkChatWorkloadDelivery is BenchmarkChatWorkload with a client
// smoothing buffer (33 ms cadence) behind each network profile: the
// delivery issue asks that the path cost at most 2× the simulator's speed
// without it.
func BenchmarkChatWorkloadDelivery(b *testing.B) {
	for _, profile := range delivery.ProfileNames() {
		b.Run(profile, func(b *testing.B) {
			cfg := chatConfig(20_000)
			cfg.Delivery.Network.Profile = profile
			cfg.Delivery.Smoothing.CadenceMS = 33
			benchmarkChat(b, cfg)
		})
	}
}
