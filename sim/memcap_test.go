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

// A closed loop bounded by its duration alone is estimated from its users'
// cycle of think time and request time, not counted as one request per
// user: the estimate is at least what the run sends and within a few times
// of it, and a loop that would send far too many is refused up front.
func TestClosedLoopByDurationEstimate(t *testing.T) {
	for _, c := range []struct {
		users         int
		thinkS, durS  float64
		maxSeqs, reps int
	}{
		{50, 1, 60, 0, 1},   // thinking users: the think time bounds them
		{8, 0, 60, 0, 1},    // no think time: their request time does
		{100, 0, 30, 16, 1}, // more users than max_num_seqs: the batch does
		{40, 0.5, 30, 0, 2}, // two replicas
	} {
		cfg := sim.DefaultConfig()
		cfg.Workload.Arrival = "closed"
		cfg.Workload.Requests, cfg.Workload.Rate = 0, 0
		cfg.Workload.Users, cfg.Workload.ThinkS, cfg.Workload.DurationS = c.users, c.thinkS, c.durS
		if c.maxSeqs > 0 {
			cfg.Scheduler.MaxNumSeqs = c.maxSeqs
		}
		if c.reps > 1 {
			cfg.Cluster.Replicas = c.reps
		}
		s := resolve(t, cfg)
		e, err := sim.NewFromSetup(s, nil)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		sent := float64(e.Run().Requests)
		est := (sim.MemoryEstimate(s, -1) - sim.MemoryEstimate(s, 0)) / (sim.MemoryEstimate(s, 1) - sim.MemoryEstimate(s, 0))
		t.Logf("%+v: %.0f requests sent, %.0f estimated", c, sent, est)
		if est < sent || est > 4*sent {
			t.Errorf("%+v: %.0f requests estimated for %.0f sent: want between 1 and 4 times", c, est, sent)
		}
	}
	cfg := sim.DefaultConfig()
	cfg.Workload.Arrival = "closed"
	cfg.Workload.Requests, cfg.Workload.Rate = 0, 0
	cfg.Workload.Users, cfg.Workload.DurationS = 1000, 1e7
	if _, err := sim.New(cfg); err == nil {
		t.Error("1000 users over 1e7 s: want the memory estimate refused")
	}
}
