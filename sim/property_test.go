package sim_test

import (
	"fmt"
	"github.com/itlsim/itlsim/kvcache"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// propertySeeds is how many random scenarios TestProperties runs; each is
// small (20–200 requests on a cramped cache) so the whole set takes a few
// seconds.
const propertySeeds = 200

// randomScenario draws a small scenario from seed: any batching policy,
// admission rule, queue order, victim rule and preemption mode; a KV cache
// a few requests deep so preemption is common; budgets from one block up;
// assorted length distributions, arrival rates, step noise and hiccups.
// The string names every drawn choice, so a failing subtest says what ran.
func randomScenario(seed uint64) (sim.Config, string) {
	r := rand.New(rand.NewPCG(seed, 0x1757))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	cfg := sim.DefaultConfig()
	cfg.Seed = seed

	sc := &cfg.Scheduler
	sc.Policy = pick(scheduler.BatcherNames())
	sc.Queue = pick(scheduler.OrderNames())
	sc.Victim = pick(scheduler.VictimNames())
	sc.Preemption = pick([]string{"recompute", "swap", "pause"})
	a := &sc.Admission
	a.Rule = pick(scheduler.AdmissionNames())
	a.Watermark = r.Float64() * 0.2
	a.ReserveOutputTokens = r.IntN(3) * r.IntN(300) // often 0: the request's own output
	a.MaxQueue = 1 + r.IntN(40)
	a.TokensPerS = 1000 + r.Float64()*50000
	a.BurstTokens = 500 + r.Float64()*20000
	if r.IntN(2) == 0 {
		sc.MaxNumSeqs = 1 + r.IntN(32)
	}
	if r.IntN(4) == 0 {
		sc.LongPrefillTokenThreshold = 1 + r.IntN(512)
	}

	kv := &cfg.KVCache
	kv.BlockSize = []int{1, 4, 16, 32}[r.IntN(4)]
	sc.MaxNumBatchedTokens = kv.BlockSize + r.IntN(2048)
	// Swap space from none (every swap falls back to recompute) through a
	// few blocks (swap runs out) to plenty; a llama-3.1-8b token is 128 KiB.
	kv.SwapSpaceGiB = []float64{0, 0.002, 0.02, 4}[r.IntN(4)]
	// Offload tiers: none, a CPU tier (the swap space then), or CPU and
	// SSD, small enough to fill and spill.
	// A llama-3.1-8b token is 128 KiB: 8192 tokens a GiB.
	gib := func(blocks int) float64 { return float64(blocks*kv.BlockSize) / 8192 }
	switch r.IntN(3) {
	case 1:
		kv.Tiers = []kvcache.Tier{{Name: "cpu", CapacityGiB: gib(1 + r.IntN(64)), ReadGBps: 20, WriteGBps: 20}}
	case 2:
		kv.Tiers = []kvcache.Tier{{Name: "cpu", CapacityGiB: gib(1 + r.IntN(16)), ReadGBps: 20, WriteGBps: 10},
			{Name: "ssd", CapacityGiB: gib(1 + r.IntN(200)), ReadGBps: 5, WriteGBps: 2}}
	}

	w := &cfg.Workload
	w.Requests = 20 + r.IntN(181)
	w.Rate = []float64{1, 10, 50, 500}[r.IntN(4)] * (0.5 + r.Float64())
	// Closed-loop arrivals depend on the run; TestClosedLoop covers them.
	w.Arrival = pick(slices.DeleteFunc(workloads.ArrivalNames(), func(n string) bool { return n == workloads.ArrivalClosed }))
	if w.Arrival == workloads.ArrivalGamma || w.Arrival == workloads.ArrivalWeibull {
		w.CV = 0.5 + 3*r.Float64()
	}
	w.InputLen = randomDist(r, 1+r.IntN(64), 1+r.IntN(2000))
	w.OutputLen = randomDist(r, 1+r.IntN(16), 1+r.IntN(400))
	maxTotal := w.InputLen.Max() + w.OutputLen.Max()
	// From a cache that cannot hold the largest request (rejected up front)
	// to one a handful of them deep.
	blocksForMax := (maxTotal + kv.BlockSize - 1) / kv.BlockSize
	kv.NumGPUBlocks = max(1, int(float64(blocksForMax)*(0.7+3*r.Float64())))
	if r.IntN(4) == 0 {
		// Reject the longest requests as too long.
		minTotal := w.InputLen.Min() + w.OutputLen.Min()
		cfg.MaxModelLen = minTotal + r.IntN(maxTotal-minTotal+1)
	}

	if r.IntN(3) == 0 {
		cfg.Cost.Model = "roofline"
	} else {
		cfg.Cost.Model = "linear"
		cfg.Cost.Linear = cost.LinearConfig{
			C0US:                      float64(1 + r.IntN(20000)),
			C1USPerPrefillToken:       r.Float64() * 50,
			C2USPerDecodeSeq:          r.Float64() * 20,
			C3USPerDecodeContextToken: r.Float64() * 0.1,
		}
	}
	if r.IntN(2) == 0 {
		cfg.Cost.NoiseCV = r.Float64()
	}
	if r.IntN(2) == 0 {
		cfg.Cost.HiccupRatePerS = 0.1 + r.Float64()*5
		cfg.Cost.HiccupMS = 1 + r.Float64()*200
	}
	cfg.Metrics.StallThresholdMS = 1 + r.Float64()*100
	cfg.Metrics.TimeseriesIntervalS = []float64{0.001, 0.1, 1}[r.IntN(3)] // 1 ms forces the series to halve
	if r.IntN(3) == 0 {
		d := &cfg.Delivery
		d.Network.Profile = []string{"datacenter", "broadband", "mobile-4g", "flaky-wifi"}[r.IntN(4)]
		if r.IntN(2) == 0 {
			d.Smoothing.CadenceMS = 10 + r.Float64()*50
		}
		if r.IntN(3) == 0 {
			d.Flush.WindowMS = 10 + r.Float64()*100
		}
		if r.IntN(3) == 0 {
			d.Render.FrameMS = 16.7
		}
		if r.IntN(3) == 0 {
			d.Failover.WatchdogMS = 100 + r.Float64()*2000
			d.Failover.KeepPrimary = r.IntN(2) == 0
		}
	}
	if r.IntN(2) == 0 {
		sd := &cfg.SpecDecode
		sd.Method = []string{"ngram", "eagle", "mtp", "draft-model"}[r.IntN(4)]
		if sd.Method == "draft-model" {
			cfg.Model, sd.DraftModel = "llama-3.1-8b", "llama-3.2-1b"
		}
		sd.K = 1 + r.IntN(8)
		acc := []string{"iid:0.8", "position-decay:0.9,0.8", "beta:4,2", "regime:0.9,0.2,40,20", "ood-share:0.8,0.1,0.3", "ood-region:0.8,0.2,0.3,0.7"}[r.IntN(6)]
		if err := sd.Acceptance.UnmarshalText([]byte(acc)); err != nil {
			panic(err)
		}
		if r.IntN(2) == 0 {
			sd.Fallback = specdecode.Fallback{Window: 1 + r.IntN(16), Threshold: r.Float64(), CooldownTokens: r.IntN(100)}
		}
		if r.IntN(3) == 0 {
			sd.DisableByBatchSize = 1 + r.IntN(8)
		}
	}

	desc := fmt.Sprintf("seed=%d,%s,%s,%s,%s,%s,kv=%dx%d,swap=%gGiB,tiers=%d,budget=%d,seqs=%d,n=%d,in=%s,out=%s,rate=%.3g,%s,maxlen=%d,noise=%.2g,hiccup=%.2g/s,spec=%s/%d/%s",
		seed, sc.Policy, a.Rule, sc.Preemption, sc.Queue, sc.Victim, kv.NumGPUBlocks, kv.BlockSize, kv.SwapSpaceGiB, len(kv.Tiers),
		sc.MaxNumBatchedTokens, sc.MaxNumSeqs, w.Requests, w.InputLen, w.OutputLen, w.Rate, cfg.Cost.Model,
		cfg.MaxModelLen, cfg.Cost.NoiseCV, cfg.Cost.HiccupRatePerS,
		cfg.SpecDecode.Method, cfg.SpecDecode.K, cfg.SpecDecode.Acceptance)
	return cfg, desc
}

// randomDist returns a length distribution within [lo, hi] (hi ≥ lo).
func randomDist(r *rand.Rand, lo, hi int) workloads.Dist {
	if hi < lo {
		lo, hi = hi, lo
	}
	mean := lo + r.IntN(hi-lo+1)
	sd := 1 + r.IntN(hi-lo+1)
	var spec string
	switch r.IntN(4) {
	case 0:
		spec = fmt.Sprintf("fixed:%d", mean)
	case 1:
		spec = fmt.Sprintf("uniform:%d,%d", lo, hi)
	case 2:
		spec = fmt.Sprintf("normal:%d,%d,%d,%d", mean, sd, lo, hi)
	default:
		spec = fmt.Sprintf("lognormal:%d,%d,%d,%d", mean, sd, lo, hi)
	}
	return workloads.MustParseDist(spec)
}

func TestProperties(t *testing.T) {
	seeds := propertySeeds
	switch {
	case raceEnabled: // 5–10× slower: a tenth of the scenarios still draws every policy
		seeds = 20
	case testing.Short():
		seeds = 40
	}
	for seed := range uint64(seeds) {
		cfg, desc := randomScenario(seed + 1)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			checkProperties(t, cfg)
		})
	}
}

// checkProperties runs cfg event by event and checks the invariants every
// run must keep, whatever the policy.
func checkProperties(t *testing.T, cfg sim.Config) {
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := workloads.Collect(src, 0)
	e, err := sim.NewFromSetup(setup, &workloads.Slice{Requests: reqs})
	if err != nil {
		t.Fatalf("NewFromSetup: %v", err)
	}

	// The engine panics on a broken invariant: a gap whose parts do not sum
	// to it, time going back, a run ending with requests or blocks still
	// held. Report the panic as this scenario's failure.
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("engine panicked at t=%d: %v\n%s", e.Now(), p, debug.Stack())
		}
	}()

	last, events := e.Now(), 0
	for e.Step() {
		events++
		now := e.Now()
		if now < last {
			t.Fatalf("event %d: clock went back from %d to %d", events, last, now)
		}
		last = now
		// The full check walks every block table and prefix index: under
		// the race detector (5–10× slower) every 16th event and the last.
		if !raceEnabled || events%16 == 0 {
			if err := e.Check(); err != nil {
				t.Fatalf("event %d, t=%d: %v", events, now, err)
			}
		}
		active := 0
		for _, rep := range e.Replicas() {
			kv := rep.KV()
			if kv.Used() > kv.Total() || kv.Free() < 0 || kv.SwapFree() < 0 || kv.SwapFree() > kv.SwapTotal() {
				t.Fatalf("event %d, t=%d, %s: KV %d used of %d, swap %d free of %d", events, now, rep.Name(), kv.Used(), kv.Total(), kv.SwapFree(), kv.SwapTotal())
			}
			running := rep.Scheduler().Running()
			if ms := rep.Setup().Config.Scheduler.MaxNumSeqs; len(running) > ms {
				t.Fatalf("event %d, %s: %d running, above max_num_seqs %d", events, rep.Name(), len(running), ms)
			}
			for _, s := range running {
				if s.State != scheduler.Running {
					t.Fatalf("event %d, %s: request %d in the running set is %v", events, rep.Name(), s.ID, s.State)
				}
			}
			active += rep.Active()
		}
		if active > len(reqs) {
			t.Fatalf("event %d: %d active of %d requests", events, active, len(reqs))
		}
		if events > 50_000_000 {
			t.Fatalf("run did not end after %d events", events)
		}
	}
	if raceEnabled {
		if err := e.Check(); err != nil {
			t.Fatalf("after the run (%d events): %v", events, err)
		}
	}
	r := e.Result()
	for _, rep := range e.Replicas() {
		if rep.Active() != 0 {
			t.Errorf("%s: %d requests still active after the run", rep.Name(), rep.Active())
		}
	}
	checkReplicas(t, e, r)

	if r.Requests != len(reqs) || r.Finished+r.RejectedTotal() != r.Requests {
		t.Errorf("requests %d (generated %d) != finished %d + rejected %d", r.Requests, len(reqs), r.Finished, r.RejectedTotal())
	}
	if r.Rejected[scheduler.ReasonNone] != 0 {
		t.Errorf("%d requests rejected without a reason", r.Rejected[scheduler.ReasonNone])
	}
	if r.Streams.Len() != len(reqs) {
		t.Errorf("%d stream summaries for %d requests", r.Streams.Len(), len(reqs))
	}
	seen := make([]bool, len(reqs))
	var (
		wantOut, wantIn int64
		stallSum        sim.Time
		preempts        int
		finished        int
		rejected        [scheduler.NumReasons]int
		gaps            uint64
	)
	for _, s := range r.Streams.All() {
		if s.ID < 0 || s.ID >= len(reqs) {
			t.Errorf("stream with unknown ID %d", s.ID)
			continue
		}
		if seen[s.ID] {
			t.Errorf("request %d reported twice", s.ID)
		}
		seen[s.ID] = true
		q := reqs[s.ID]
		if s.Arrival != sim.Time(q.Arrival) || s.InputTokens != q.InputTokens {
			t.Errorf("request %d: arrival %d, input %d; generated %d, %d", s.ID, s.Arrival, s.InputTokens, q.Arrival, q.InputTokens)
		}
		preempts += s.Preemptions
		switch s.Status {
		case sim.StatusFinished:
			finished++
			wantOut += int64(q.OutputTokens)
			wantIn += int64(q.InputTokens)
			stallSum += s.StallTime
			gaps += uint64(s.Chunks - 1)
			if s.OutputTokens != q.OutputTokens {
				t.Errorf("request %d: %d tokens out, requested %d", s.ID, s.OutputTokens, q.OutputTokens)
			}
			// Each token is its own chunk without speculative decoding;
			// with it, a chunk carries one or more tokens.
			// A delivery path may merge chunks too (coalescing, smoothing).
			if merged := cfg.SpecDecode.Enabled() || cfg.Delivery.Enabled(); (!merged && s.Chunks != q.OutputTokens) || (merged && (s.Chunks > q.OutputTokens || s.Chunks < 1)) {
				t.Errorf("request %d: %d chunks for %d tokens", s.ID, s.Chunks, q.OutputTokens)
			}
			if s.TTFT < 0 || s.E2EL < s.TTFT {
				t.Errorf("request %d: TTFT %d, E2EL %d", s.ID, s.TTFT, s.E2EL)
			}
			if s.HasGaps() && (s.GapP50 > s.GapP90 || s.GapP90 > s.GapP99 || s.GapP99 > float64(s.GapMax) || s.GapMean > float64(s.GapMax)) {
				t.Errorf("request %d: gap stats out of order: p50 %g p90 %g p99 %g max %d mean %g", s.ID, s.GapP50, s.GapP90, s.GapP99, s.GapMax, s.GapMean)
			}
			if s.StallTime > s.E2EL-s.TTFT {
				t.Errorf("request %d: stall time %d above its decode span %d", s.ID, s.StallTime, s.E2EL-s.TTFT)
			}
		case sim.StatusRejected:
			rejected[s.Reject]++
			if s.Reject == scheduler.ReasonNone {
				t.Errorf("request %d rejected without a reason", s.ID)
			}
		}
	}
	for id, ok := range seen {
		if !ok {
			t.Errorf("request %d missing from Streams", id)
		}
	}
	if finished != r.Finished || rejected != r.Rejected {
		t.Errorf("streams: %d finished, rejected %v; result: %d, %v", finished, rejected, r.Finished, r.Rejected)
	}
	if r.OutputTokens != wantOut || r.InputTokens != wantIn {
		t.Errorf("tokens out %d in %d; requested by finished requests %d, %d", r.OutputTokens, r.InputTokens, wantOut, wantIn)
	}
	if preempts != r.PreemptRecompute+r.PreemptSwap {
		t.Errorf("streams preempted %d times; result counts %d + %d", preempts, r.PreemptRecompute, r.PreemptSwap)
	}
	// Parts of every stall gap sum to the gap, so the per-cause totals sum
	// to the streams' stall time.
	var byCause sim.Time
	for _, v := range r.StallTime {
		if v < 0 {
			t.Errorf("negative stall part: %v", r.StallTime)
		}
		byCause += v
	}
	if byCause != stallSum {
		t.Errorf("stall time by cause sums to %d, streams' stall time to %d", byCause, stallSum)
	}
	if r.Pooled.N != gaps {
		t.Errorf("pooled histogram holds %d gaps, finished streams have %d", r.Pooled.N, gaps)
	}
	if setup.Config.Scheduler.Preemption == "recompute" && (r.PreemptSwap != 0 || r.SwapBytes != 0) {
		t.Errorf("recompute mode swapped: %d swaps, %d bytes", r.PreemptSwap, r.SwapBytes)
	}
	if setup.Config.Scheduler.Preemption != "pause" && r.PreemptPause != 0 {
		t.Errorf("%s mode paused %d times", setup.Config.Scheduler.Preemption, r.PreemptPause)
	}
	checkTiers(t, setup, r)
	if r.PreemptSwap > 0 && r.SwapBytes <= 0 {
		t.Errorf("%d swaps moved %d bytes", r.PreemptSwap, r.SwapBytes)
	}
	// The time series is the server's: with a failover watchdog aborting
	// primaries, the backups' tokens are not in it.
	srv := e.ServerResult()
	var seriesTokens int64
	var seriesFinished int
	for _, b := range r.Series.Buckets {
		seriesTokens += b.OutputTokens
		seriesFinished += b.Finished
	}
	if seriesFinished != srv.Finished {
		t.Errorf("time series counts %d finished, server result %d", seriesFinished, srv.Finished)
	}
	if seriesTokens < srv.OutputTokens {
		t.Errorf("time series counts %d tokens, server streams %d", seriesTokens, srv.OutputTokens)
	}
	if srv.Finished+srv.Cancelled+srv.RejectedTotal() != srv.Requests {
		t.Errorf("server view: %d finished + %d cancelled + %d rejected != %d requests", srv.Finished, srv.Cancelled, srv.RejectedTotal(), srv.Requests)
	}
	if f := setup.Config.Delivery.Failover; f.WatchdogMS > 0 && !f.KeepPrimary {
		if srv.Cancelled != r.Delivery.Failovers {
			t.Errorf("%d streams cancelled on the server, %d failovers in the client view", srv.Cancelled, r.Delivery.Failovers)
		}
	} else if srv.Cancelled != 0 {
		t.Errorf("%d streams cancelled without a watchdog that aborts primaries", srv.Cancelled)
	}
	if len(r.Series.Buckets) > 1024 {
		t.Errorf("%d time-series buckets, above the 1024 cap", len(r.Series.Buckets))
	}
	if t.Failed() {
		t.Logf("config: %s", strings.ReplaceAll(fmt.Sprintf("%+v", setup.Config), " ", " "))
	}
}

// checkTiers checks the offload tiers' counters: what a tier loaded or
// passed down it had stored, hits are loaded blocks, and the bytes priced
// are the blocks loaded.
func checkTiers(t *testing.T, setup *sim.Setup, r *sim.Result) {
	t.Helper()
	if len(setup.Tiers) == 0 {
		if len(r.Tiers) != 0 || r.TierLoadBytes != 0 {
			t.Errorf("no tiers configured, results show %+v and %d bytes loaded", r.Tiers, r.TierLoadBytes)
		}
		return
	}
	if len(r.Tiers) != len(setup.Tiers) {
		t.Fatalf("%d tiers configured, %d in the result", len(setup.Tiers), len(r.Tiers))
	}
	var loaded, hits int64
	for i, tr := range r.Tiers {
		if tr.Name != setup.Tiers[i].Name {
			t.Errorf("tier %d is %q, configured %q", i, tr.Name, setup.Tiers[i].Name)
		}
		if tr.LoadedBlocks+tr.DroppedBlocks > tr.StoredBlocks {
			t.Errorf("tier %s: %d loaded + %d passed down of %d stored", tr.Name, tr.LoadedBlocks, tr.DroppedBlocks, tr.StoredBlocks)
		}
		if up := r.Tiers[max(i-1, 0)]; i > 0 && tr.StoredBlocks != up.DroppedBlocks+up.SkippedBlocks {
			t.Errorf("tier %s stored %d blocks, the tier above passed down %d + %d", tr.Name, tr.StoredBlocks, up.DroppedBlocks, up.SkippedBlocks)
		}
		if tr.HitTokens > tr.LoadedBlocks*int64(setup.Config.KVCache.BlockSize) {
			t.Errorf("tier %s: %d hit tokens from %d loaded blocks", tr.Name, tr.HitTokens, tr.LoadedBlocks)
		}
		loaded += tr.LoadedBlocks
		hits += tr.HitTokens
	}
	if hits > r.PrefixHits {
		t.Errorf("tiers hit %d tokens, the prefix cache %d in all", hits, r.PrefixHits)
	}
	if r.TierLoadBytes > loaded*setup.BlockBytes {
		t.Errorf("%d bytes loaded priced, %d blocks of %d bytes loaded", r.TierLoadBytes, loaded, setup.BlockBytes)
	}
}
