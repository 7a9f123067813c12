package delivery

import "testing"

// everything turns every mechanism on.
func everything() Config {
	cfg := DefaultConfig()
	cfg.Network.Profile = "mobile-4g"
	cfg.Coalescing.Preset = "nagle"
	cfg.Render.FrameMS = 16.7
	cfg.Flush.WindowMS = 30
	cfg.Smoothing.CadenceMS = 33
	cfg.Failover.WatchdogMS = 1500
	return cfg
}

// Once its scratch has grown, Deliver allocates nothing, with every
// mechanism on, a failover included.
func TestDeliverAllocatesNothing(t *testing.T) {
	p := mustNew(t, everything())
	cs := pauseAfter(steady(100*ms, 20*ms, 500), 200, 3000*ms)
	var st Stream
	var out Result
	seed := uint64(0)
	p.Deliver(&st, Request{Seed: seed, PromptTokens: 1000, Chunks: cs}, &out)
	if out.Failovers != 1 {
		t.Fatal("the warm-up did not fail over")
	}
	allocs := testing.AllocsPerRun(200, func() {
		seed++
		p.Deliver(&st, Request{Seed: seed % 4, PromptTokens: 1000, Chunks: cs}, &out)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per Deliver", allocs)
	}
}

// BenchmarkDeliver delivers a 256-chunk stream (20 ms cadence) through
// each configuration; ns/op is per stream.
func BenchmarkDeliver(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"off", DefaultConfig()},
		{"mobile-4g", func() Config { c := DefaultConfig(); c.Network.Profile = "mobile-4g"; return c }()},
		{"mobile-4g+smoothing", func() Config {
			c := DefaultConfig()
			c.Network.Profile = "mobile-4g"
			c.Smoothing.CadenceMS = 33
			return c
		}()},
		{"everything", everything()},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := mustNew(b, c.cfg)
			req := Request{PromptTokens: 1000, Chunks: steady(100*ms, 20*ms, 256)}
			var st Stream
			var out Result
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				req.Seed = uint64(i)
				p.Deliver(&st, req, &out)
			}
		})
	}
}
