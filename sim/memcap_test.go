package sim_test

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/memory"
)

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"8GiB", 8 << 30}, {"512 MiB", 512 << 20}, {"4e9", 4e9}, {"2GB", 2e9}, {"1kib", 1024}, {"100B", 100},
	} {
		got, err := memory.ParseBytes(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "0", "NaN", "1e30", "5XB", "8 GiBs"} {
		if got, err := memory.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

func TestMemoryCap(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.KVCache.NumGPUBlocks = 2_000_000_000
	if _, err := sim.New(cfg); err == nil {
		t.Fatal("2e9 blocks: want the memory estimate refused")
	}
	cfg = sim.DefaultConfig()
	cfg.Workload.Requests = 0
	cfg.Workload.Rate, cfg.Workload.DurationS = 1.7e7, 60
	if _, err := sim.New(cfg); err == nil {
		t.Fatal("1e9 requests: want the memory estimate refused")
	}
	cfg.MaxMemoryBytes = 1 << 50
	s := resolve(t, cfg)
	if est := sim.MemoryEstimate(s, -1); est < 1e12 {
		t.Errorf("estimate %g for 1e9 requests, want over 1 TB", est)
	}
	cfg = sim.DefaultConfig()
	cfg.MaxMemoryBytes = 1 << 20
	if _, err := sim.New(cfg); err == nil {
		t.Fatal("1 MiB cap: want the default scenario refused")
	}
	cfg.MaxMemoryBytes = 0
	if _, err := sim.New(cfg); err != nil {
		t.Fatalf("default scenario: %v", err)
	}
}
