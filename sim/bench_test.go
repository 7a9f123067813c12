package sim_test

import (
	"github.com/itlsim/itlsim/kvcache"
	"strconv"
	"testing"
	"time"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// chatConfig is the benchmark scenario: Llama-3.1-8B on one H100-SXM-80GB
// under chunked prefill, Poisson arrivals at 40 requests/s, prompts and
// outputs of about 256 ± 100 tokens.
func chatConfig(requests int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Model = "llama-3.1-8b"
	cfg.GPU = "h100-sxm-80gb"
	cfg.Scheduler.Policy = "chunked"
	cfg.Workload.Arrival = workloads.ArrivalPoisson
	cfg.Workload.Rate = 40
	cfg.Workload.Requests = requests
	// The steady-state tests step an endless stream (1<<30 requests) a few
	// thousand times: the memory estimate of a whole run does not apply.
	cfg.MaxMemoryBytes = 1 << 62
	cfg.Workload.InputLen = workloads.MustParseDist("normal:256,100,16,1024")
	cfg.Workload.OutputLen = workloads.MustParseDist("normal:256,100,16,1024")
	return cfg
}

// BenchmarkChatWorkload runs a whole 20,000-request chat workload per
// iteration and reports simulated output tokens per wall-clock second.
func BenchmarkChatWorkload(b *testing.B) {
	benchmarkChat(b, chatConfig(20_000))
}

// BenchmarkChatCluster16 runs the chat workload on 16 replicas behind
// each router, at 16 times the single replica's rate (each replica sees
// the load of BenchmarkChatWorkload), 20,000 requests per iteration.
// Simulated output tokens per wall-second compare with the single
// replica's: the target is at least 0.8 of it.
func BenchmarkChatCluster16(b *testing.B) {
	for _, name := range []string{"round-robin", "least-outstanding", "vllm-dp", "llm-d"} {
		b.Run(name, func(b *testing.B) {
			cfg := chatConfig(20_000)
			cfg.Workload.Rate *= 16
			cfg.Cluster.Replicas = 16
			cfg.Cluster.Router.Policy = name
			benchmarkChat(b, cfg)
		})
	}
}

// BenchmarkChatCluster16Steady is BenchmarkChatCluster16 over the same
// simulated time as BenchmarkChatWorkload: 320,000 requests, 20,000 per
// replica, so each replica does the single replica's work from the same
// warm-up to the same steady state, and per-replica setup weighs the same.
// Its tokens/s against BenchmarkChatWorkload's is the cluster's cost per
// token (the 20,000-request BenchmarkChatCluster16 spends a sixteenth of
// the simulated time per replica, most of it filling the batch).
func BenchmarkChatCluster16Steady(b *testing.B) {
	for _, name := range []string{"round-robin", "least-outstanding"} {
		b.Run(name, func(b *testing.B) {
			cfg := chatConfig(320_000)
			cfg.Workload.Rate *= 16
			cfg.Cluster.Replicas = 16
			cfg.Cluster.Router.Policy = name
			benchmarkChatN(b, cfg, 320_000)
		})
	}
}

// BenchmarkChatDisagg16 runs the chat workload on 16 replicas split 4:12
// into prefill and decode pools over the RDMA link, at 16 times the single
// replica's rate, 20,000 requests per iteration: the handoff's cost per
// request against BenchmarkChatCluster16.
func BenchmarkChatDisagg16(b *testing.B) {
	benchmarkChat(b, disaggChat(20_000))
}

// disaggChat is the chat workload of n requests on 16 replicas split 4:12.
func disaggChat(n int) sim.Config {
	cfg := chatConfig(n)
	cfg.Workload.Rate *= 16
	cfg.Cluster.Replicas = 16
	cfg.Cluster.PrefillDecode = "4:12"
	cfg.Cluster.Router.Policy = "least-outstanding"
	return cfg
}

// benchmarkChat runs cfg (20,000 chat requests) per iteration and reports
// simulated output tokens per wall-second.
func benchmarkChat(b *testing.B, cfg sim.Config) {
	benchmarkChatN(b, cfg, 20_000)
}

// benchmarkChatN runs cfg, which has n requests, per iteration.
func benchmarkChatN(b *testing.B, cfg sim.Config, n int) {
	setup, err := cfg.Resolve()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var tokens int64
	start := time.Now() // wall time for the metric only; the simulation never reads it
	for b.Loop() {
		e, err := sim.NewFromSetup(setup, nil)
		if err != nil {
			b.Fatal(err)
		}
		r := e.Run()
		if r.Finished != n {
			b.Fatalf("finished %d of %d", r.Finished, n)
		}
		tokens += r.OutputTokens
	}
	el := time.Since(start)
	b.ReportMetric(float64(tokens)/el.Seconds(), "tokens/s")
	// A steady decode is one token per stream per step: ns per output
	// token is the cost of a stream-step, the engine's and (on one core)
	// the scoring of the streams that ended.
	b.ReportMetric(float64(el.Nanoseconds())/float64(tokens), "ns/token")
}

// steadyEngine returns an engine over an effectively endless chat workload
// that has processed warm events, so its buffers (request slots, gap
// buffers, plan and batch slices, event heap) have grown to their working
// size.
func steadyEngine(tb testing.TB, warm int) *sim.Engine {
	return steadyEngineOf(tb, chatConfig(1<<30), warm)
}

// steadyEngineOf is steadyEngine for cfg, whose workload must not end.
func steadyEngineOf(tb testing.TB, cfg sim.Config, warm int) *sim.Engine {
	tb.Helper()
	e, err := sim.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	for range warm {
		if !e.Step() {
			tb.Fatal("workload ended during warm-up")
		}
	}
	return e
}

// BenchmarkStep measures one event in steady state: ns and allocations per
// processed event after a 200,000-event warm-up.
func BenchmarkStep(b *testing.B) {
	e := steadyEngine(b, 200_000)
	b.ReportAllocs()
	for b.Loop() {
		if !e.Step() {
			b.Fatal("workload ended")
		}
	}
}

// TestStepSteadyStateAllocs: once warm, stepping allocates (almost)
// nothing. The allowed allocations are amortized growth, none of them per
// token or per step:
//   - Result.Streams grows by one StreamSummary per finished request
//     (append doubles its capacity: O(log n) allocations over a run);
//   - a time-series bucket with its histogram per simulated second (the
//     default interval); at ~15 ms a step, 1000 steps cross ~15 buckets;
//   - a request slot or gap buffer grows past its previous high-water mark
//     when concurrency or a stream's length sets a new record (rare once
//     warm).
//
// Together that is well under 0.05 allocations per event; a per-token or
// per-step allocation would be at least 1.
func TestStepSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("long warm-up")
	}
	if raceEnabled {
		t.Skip("the race detector allocates on its own, and slows the warm-up 5–10×")
	}
	checkSteadyAllocs(t, steadyEngine(t, 200_000))
}

// TestDisaggStepSteadyStateAllocs: the same bound with prefill and decode
// pools, whose events include handoffs, transfers and landings (one each
// per request: the transfer queue and the pools' slots are reused).
func TestDisaggStepSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("long warm-up")
	}
	if raceEnabled {
		t.Skip("the race detector allocates on its own, and slows the warm-up 5–10×")
	}
	checkSteadyAllocs(t, steadyEngineOf(t, disaggChat(1<<30), 400_000))
}

func checkSteadyAllocs(t *testing.T, e *sim.Engine) {
	t.Helper()
	const steps = 1000
	perRun := testing.AllocsPerRun(5, func() {
		for range steps {
			if !e.Step() {
				t.Fatal("workload ended")
			}
		}
	})
	per := perRun / steps
	t.Logf("%.4f allocations per event", per)
	if per >= 0.05 {
		t.Errorf("%.3f allocations per event in steady state (%g per %d events), want < 0.05", per, perRun, steps)
	}
}

// TestMemoryBoundedByActiveStreams: twenty times the tokens per request do
// not multiply what the engine holds or allocates. A finished stream
// leaves a fixed-size summary and its slot is reused, so the engine holds
// one slot per request in the system at once (a slot is only added when
// none is free, so peak Active() is the slot count), whatever the number of
// tokens simulated. Requests arrive every 20 s, after the previous one has
// finished even with 2000 output tokens, so both runs have one request in
// the system at a time and span the same simulated time: any difference in
// allocations comes from the tokens.
func TestMemoryBoundedByActiveStreams(t *testing.T) {
	const requests = 300
	type stats struct {
		peak   int
		tokens int64
		allocs float64
	}
	measure := func(output int) stats {
		cfg := chatConfig(requests)
		cfg.Workload.Arrival = workloads.ArrivalConstant
		cfg.Workload.Rate = 0.05
		cfg.Workload.InputLen = workloads.MustParseDist("fixed:256")
		cfg.Workload.OutputLen = workloads.MustParseDist("fixed:" + strconv.Itoa(output))
		setup, err := cfg.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		var s stats
		s.allocs = testing.AllocsPerRun(1, func() {
			e, err := sim.NewFromSetup(setup, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.peak = 0
			for e.Step() {
				s.peak = max(s.peak, e.Replica().Active())
			}
			r := e.Result()
			if r.Finished != requests || r.Streams.Len() != requests {
				t.Fatalf("finished %d, %d summaries; want %d", r.Finished, r.Streams.Len(), requests)
			}
			s.tokens = r.OutputTokens
		})
		return s
	}
	short, long := measure(100), measure(2000)
	t.Logf("output 100: %d tokens, peak %d active, %.0f allocs; output 2000: %d tokens, peak %d active, %.0f allocs",
		short.tokens, short.peak, short.allocs, long.tokens, long.peak, long.allocs)
	if long.tokens != 20*short.tokens {
		t.Fatalf("tokens %d vs %d, want 20×", long.tokens, short.tokens)
	}
	if short.peak != 1 || long.peak != 1 {
		t.Errorf("peak active %d and %d, want 1: one request in the system at a time", short.peak, long.peak)
	}
	// The only token-dependent allocations are the reused gap buffer
	// doubling from 64 to 2048 entries (5 times) and time-series buckets;
	// allow a few dozen, against 570,000 extra tokens.
	if long.allocs > short.allocs+50 {
		t.Errorf("20× the tokens took %.0f allocations vs %.0f: allocation grows with tokens", long.allocs, short.allocs)
	}
}

// TestStepAllocsUnderPausesAndTiers: the same bound with the cache under
// pressure, streams pausing, and evicted blocks moving through a CPU and
// an SSD tier (whose entry tables grow to their high-water mark once).
func TestStepAllocsUnderPausesAndTiers(t *testing.T) {
	if testing.Short() {
		t.Skip("long warm-up")
	}
	if raceEnabled {
		t.Skip("the race detector allocates on its own, and slows the warm-up 5–10×")
	}
	cfg := chatConfig(1 << 30)
	cfg.Workload.Rate = 12
	cfg.KVCache.NumGPUBlocks = 1200
	cfg.Scheduler.Preemption = "pause"
	cfg.KVCache.Tiers = []kvcache.Tier{{Name: "cpu", CapacityGiB: 1, ReadGBps: 25, WriteGBps: 25}, {Name: "ssd", CapacityGiB: 4, ReadGBps: 6, WriteGBps: 3}}
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 200_000 {
		if !e.Step() {
			t.Fatal("workload ended during warm-up")
		}
	}
	const steps = 1000
	perRun := testing.AllocsPerRun(5, func() {
		for range steps {
			if !e.Step() {
				t.Fatal("workload ended")
			}
		}
	})
	per := perRun / steps
	kv := e.Replicas()[0].KV()
	st := kv.TierStats()
	t.Logf("%.4f allocations per event; %d pauses so far; tiers %+v", per, e.ServerResult().PreemptPause, st)
	if st[0].Stored == 0 || e.ServerResult().PreemptPause == 0 {
		t.Fatalf("no pressure: %d pauses, tiers %+v", e.ServerResult().PreemptPause, st)
	}
	if per >= 0.05 {
		t.Errorf("%.3f allocations per event under pauses and tiers (%g per %d events), want < 0.05", per, perRun, steps)
	}
}

// BenchmarkSharedPrefixCluster16 is BenchmarkChatCluster16 with a system
// prompt shared within eight groups by half the requests: the blocks those
// register and evict go through the prefix cache's index, which the
// private blocks of the chat workload never touch.
func BenchmarkSharedPrefixCluster16(b *testing.B) {
	cfg := chatConfig(20_000)
	cfg.Workload.Rate *= 16
	cfg.Workload.SharedPrefix = workloads.SharedPrefix{Groups: 8, Tokens: 512, Share: 0.5}
	cfg.Cluster.Replicas = 16
	cfg.Cluster.Router.Policy = "round-robin"
	benchmarkChat(b, cfg)
}
