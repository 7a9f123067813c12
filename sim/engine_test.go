package sim_test

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// linearConfig is the default scenario priced by a linear cost model whose
// step times are whole microseconds: every step costs c0 µs plus c1 µs per
// prefill token, and nothing else, so a decode step is exactly c0.
func linearConfig(c0, c1 float64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear = cost.LinearConfig{C0US: c0, C1USPerPrefillToken: c1}
	cfg.Server = sim.ServerConfig{} // the engine alone: server_test.go tests the front end
	return cfg
}

func resolve(t testing.TB, cfg sim.Config) *sim.Setup {
	t.Helper()
	s, err := cfg.Resolve()
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return s
}

// replay builds an engine over hand-made requests; IDs are their indices.
func replay(t testing.TB, cfg sim.Config, reqs ...workloads.Request) *sim.Engine {
	t.Helper()
	for i := range reqs {
		reqs[i].ID = i
	}
	e, err := sim.NewFromSetup(resolve(t, cfg), &workloads.Slice{Requests: reqs})
	if err != nil {
		t.Fatalf("NewFromSetup: %v", err)
	}
	return e
}

func req(arrival sim.Time, input, output int) workloads.Request {
	return workloads.Request{Arrival: int64(arrival), InputTokens: input, OutputTokens: output}
}

// stream returns the summary of request id.
func stream(t *testing.T, r *sim.Result, id int) sim.StreamSummary {
	t.Helper()
	i := slices.IndexFunc(r.Streams.Slice(), func(s sim.StreamSummary) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("request %d missing from Streams", id)
	}
	return *r.Streams.At(i)
}

// runChecked steps e to the end, checking after every event that the clock
// never goes back, the cache's books balance and no more blocks are used
// than exist.
func runChecked(t testing.TB, e *sim.Engine) *sim.Result {
	t.Helper()
	last := e.Now()
	for e.Step() {
		if now := e.Now(); now < last {
			t.Fatalf("clock went back from %d to %d", last, now)
		}
		last = e.Now()
		if err := e.Check(); err != nil {
			t.Fatalf("t=%d: %v", last, err)
		}
		if kv := e.Replica().KV(); kv.Used() > kv.Total() || kv.Free() < 0 || kv.SwapFree() < 0 || kv.SwapFree() > kv.SwapTotal() {
			t.Fatalf("t=%d: KV used %d of %d, swap free %d of %d", last, kv.Used(), kv.Total(), kv.SwapFree(), kv.SwapTotal())
		}
	}
	return e.Result()
}

func smallDefault(requests int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = requests
	return cfg
}

func mustRun(t testing.TB, cfg sim.Config) *sim.Result {
	t.Helper()
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e.Run()
}

func TestDeterministic(t *testing.T) {
	cfg := smallDefault(300)
	cfg.Cost.NoiseCV = 0.2
	cfg.Cost.HiccupRatePerS = 0.5
	a, b := mustRun(t, cfg), mustRun(t, cfg)
	if !reflect.DeepEqual(a.Streams, b.Streams) {
		t.Error("same config, different stream summaries")
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("same config, different results")
	}
	if a.Finished != 300 {
		t.Errorf("finished %d of 300", a.Finished)
	}

	cfg.Seed = 2
	c := mustRun(t, cfg)
	if reflect.DeepEqual(a.Streams, c.Streams) {
		t.Error("seeds 1 and 2 gave the same stream summaries")
	}
}

// Engines sharing one Setup run independently: concurrent runs equal a
// lone one (run with -race to check they share nothing mutable).
func TestSharedSetupConcurrent(t *testing.T) {
	s := resolve(t, smallDefault(200))
	want := func() *sim.Result {
		e, err := sim.NewFromSetup(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e.Run()
	}()
	got := make([]*sim.Result, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			e, err := sim.NewFromSetup(s, nil)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = e.Run()
		})
	}
	wg.Wait()
	for i, r := range got {
		if !reflect.DeepEqual(r, want) {
			t.Errorf("concurrent run %d differs from a lone run", i)
		}
	}
}

// TestDrivingAPI single-steps one request through its life and looks at
// the scheduler between events.
func TestDrivingAPI(t *testing.T) {
	// Prompt 100 at 2 ms: a 2 ms prefill (1000 + 10·100 µs), then 1 ms decodes.
	e := replay(t, linearConfig(1000, 10), req(2*sim.Millisecond, 100, 3))
	sched := e.Replica().Scheduler()
	type state struct {
		now              sim.Time
		waiting, running int
	}
	want := []state{
		{2 * sim.Millisecond, 1, 0}, // arrival: queued
		{2 * sim.Millisecond, 0, 1}, // step start: prefill running
		{4 * sim.Millisecond, 0, 1}, // step end: first token
		{4 * sim.Millisecond, 0, 1}, // decode step starts
		{5 * sim.Millisecond, 0, 1}, // second token
		{5 * sim.Millisecond, 0, 1},
		{6 * sim.Millisecond, 0, 0}, // third and last token: finished
		{6 * sim.Millisecond, 0, 0}, // step start finds nothing to do
	}
	var got []state
	for e.Step() {
		got = append(got, state{e.Now(), sched.Waiting(), len(sched.Running())})
		if err := e.Check(); err != nil {
			t.Fatalf("after event %d: %v", len(got), err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\ngot  %v\nwant %v", got, want)
	}
	if e.Step() {
		t.Error("Step after the end processed an event")
	}
	if r := e.Result(); r.Duration != 6*sim.Millisecond || r.Steps != 3 || r.Finished != 1 {
		t.Errorf("duration %d, steps %d, finished %d; want 6 ms, 3, 1", r.Duration, r.Steps, r.Finished)
	}
}

func TestDrivingAPIInvariants(t *testing.T) {
	cfg := smallDefault(100)
	cfg.KVCache.NumGPUBlocks = 400 // tight enough to preempt
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := runChecked(t, e)
	if r.Finished+r.RejectedTotal() != 100 {
		t.Errorf("finished %d + rejected %d != 100", r.Finished, r.RejectedTotal())
	}
	if r.PreemptRecompute == 0 {
		t.Error("400 blocks never preempted; the test no longer exercises preemption")
	}
}

// TestTokenTimeline checks TTFT, E2EL and gaps against step times worked
// out by hand.
func TestTokenTimeline(t *testing.T) {
	const ms = sim.Millisecond
	for _, tc := range []struct {
		name          string
		policy        string
		budget        int
		input, output int
		ttft, e2el    sim.Time
		chunks        int
		gapMean, gap  float64 // ns: the mean, and p50 = p99 = max
	}{
		// 1000 µs + 10 µs × 100 prompt tokens = 2 ms, then 1 ms per token.
		{"chunked", "chunked", 8192, 100, 10, 2 * ms, 11 * ms, 10, 1e6, 1e6},
		{"prefill-first", "prefill-first", 8192, 100, 10, 2 * ms, 11 * ms, 10, 1e6, 1e6},
		{"orca", "orca", 8192, 100, 10, 2 * ms, 11 * ms, 10, 1e6, 1e6},
		{"static", "static", 8192, 100, 10, 2 * ms, 11 * ms, 10, 1e6, 1e6},
		// A 1000-token prompt in 256-token chunks: 3 × 3.56 ms + 3.32 ms.
		{"chunked-256", "chunked", 256, 1000, 5, 14 * ms, 18 * ms, 5, 1e6, 1e6},
		// One output token: no gaps.
		{"one-token", "chunked", 8192, 100, 1, 2 * ms, 2 * ms, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := linearConfig(1000, 10)
			cfg.Scheduler.Policy = tc.policy
			cfg.Scheduler.MaxNumBatchedTokens = tc.budget
			e := replay(t, cfg, req(7*ms, tc.input, tc.output))
			r := runChecked(t, e)
			s := stream(t, r, 0)
			if s.Status != sim.StatusFinished || s.OutputTokens != tc.output {
				t.Fatalf("status %v, %d tokens; want finished, %d", s.Status, s.OutputTokens, tc.output)
			}
			if s.TTFT != tc.ttft || s.E2EL != tc.e2el || s.Chunks != tc.chunks {
				t.Errorf("TTFT %d, E2EL %d, chunks %d; want %d, %d, %d", s.TTFT, s.E2EL, s.Chunks, tc.ttft, tc.e2el, tc.chunks)
			}
			if s.GapMean != tc.gapMean || s.GapP50 != tc.gap || s.GapP99 != tc.gap || float64(s.GapMax) != tc.gap {
				t.Errorf("gaps mean %g p50 %g p99 %g max %d; want all %g", s.GapMean, s.GapP50, s.GapP99, s.GapMax, tc.gap)
			}
			if want := float64(tc.e2el-tc.ttft) / max(1, float64(tc.output-1)); s.TPOT() != want {
				t.Errorf("TPOT %g, want %g", s.TPOT(), want)
			}
			if r.Duration != 7*ms+tc.e2el {
				t.Errorf("duration %d, want %d", r.Duration, 7*ms+tc.e2el)
			}
			if r.StallTime != [sim.NumCauses]sim.Time{} || s.Stalls != 0 {
				t.Errorf("stall time %v, stalls %d; want none", r.StallTime, s.Stalls)
			}
			if r.Pooled.N != uint64(tc.chunks-1) {
				t.Errorf("pooled gaps %d, want %d", r.Pooled.N, tc.chunks-1)
			}
			if r.OutputTokens != int64(tc.output) || r.InputTokens != int64(tc.input) {
				t.Errorf("tokens in %d out %d, want %d, %d", r.InputTokens, r.OutputTokens, tc.input, tc.output)
			}
		})
	}
}

// TestPrefillInterference: a long prompt arrives while a short request
// decodes. Prefill-first runs it as one prefill-only step that the decoding
// stream waits out; chunked spreads it over budgeted steps the stream
// decodes in.
func TestPrefillInterference(t *testing.T) {
	const us = sim.Microsecond
	// Linear costs: 1000 µs a step + 10 µs a prefill token.
	// a: 16-token prompt at 0 (1.16 ms prefill), then tokens every 1 ms at
	//    1.16, 2.16, …, 11.16 ms.
	// b: 2000-token prompt at 10.5 ms, queued until the step ending 11.16 ms.
	reqs := func() []workloads.Request {
		return []workloads.Request{req(0, 16, 50), req(10500*us, 2000, 5)}
	}
	setup := func(policy string) sim.Config {
		cfg := linearConfig(1000, 10)
		cfg.Scheduler.Policy = policy
		cfg.Scheduler.MaxNumBatchedTokens = 512
		cfg.Metrics.StallThresholdMS = 10
		return cfg
	}

	t.Run("prefill-first", func(t *testing.T) {
		r := runChecked(t, replay(t, setup("prefill-first"), reqs()...))
		a, b := stream(t, r, 0), stream(t, r, 1)
		// b's whole prompt runs alone from 11.16 ms for 1000 + 20000 µs; a's
		// next decode follows, so a waits 21 ms of prefill plus 1 ms of decode.
		if a.GapMax != 22000*us || a.Stalls != 1 || a.StallTime != 22000*us {
			t.Errorf("a: max gap %d, stalls %d (%d ns); want one 22 ms stall", a.GapMax, a.Stalls, a.StallTime)
		}
		want := [sim.NumCauses]sim.Time{}
		want[sim.CausePrefillInterference] = 21000 * us
		want[sim.CauseDecode] = 1000 * us
		if r.StallTime != want {
			t.Errorf("stall time by cause %v, want %v", r.StallTime, want)
		}
		if a.Causes != 1<<sim.CausePrefillInterference|1<<sim.CauseDecode {
			t.Errorf("a's causes %b", a.Causes)
		}
		if r.StreamsHit[sim.CausePrefillInterference] != 1 {
			t.Errorf("streams hit by prefill interference %d, want 1", r.StreamsHit[sim.CausePrefillInterference])
		}
		if b.TTFT != 32160*us-10500*us {
			t.Errorf("b TTFT %d, want 21.66 ms", b.TTFT)
		}
		if a.E2EL != 1160*us+49000*us+21000*us {
			t.Errorf("a E2EL %d, want 71.16 ms", a.E2EL)
		}
	})

	t.Run("chunked", func(t *testing.T) {
		r := runChecked(t, replay(t, setup("chunked"), reqs()...))
		a, b := stream(t, r, 0), stream(t, r, 1)
		// a's decode takes one token of the 512 budget; b's prompt goes in
		// chunks of 511, 511, 511, 467: steps of 6.11 ms × 3 and 5.67 ms.
		// No gap exceeds one fully budgeted step, 1000 + 10 × 512 µs.
		if a.GapMax != 6110*us {
			t.Errorf("a: max gap %d, want 6.11 ms", a.GapMax)
		}
		if budgeted := 1000*us + 512*10*us; a.GapMax > budgeted {
			t.Errorf("a: max gap %d above one budgeted step %d", a.GapMax, budgeted)
		}
		if a.Stalls != 0 || r.StallTime != [sim.NumCauses]sim.Time{} {
			t.Errorf("stalls %d, stall time %v; want none under 10 ms", a.Stalls, r.StallTime)
		}
		if b.TTFT != 11160*us+3*6110*us+5670*us-10500*us {
			t.Errorf("b TTFT %d, want 24.66 ms", b.TTFT)
		}
	})

	t.Run("chunked-attribution", func(t *testing.T) {
		cfg := setup("chunked")
		cfg.Metrics.StallThresholdMS = 5
		r := runChecked(t, replay(t, cfg, reqs()...))
		// All four mixed steps are stalls for a: 1 ms of decode each, the
		// rest is b's chunks (5.11 × 3 + 4.67 ms).
		want := [sim.NumCauses]sim.Time{}
		want[sim.CauseDecode] = 4000 * us
		want[sim.CausePrefillInterference] = 3*5110*us + 4670*us
		if r.StallTime != want {
			t.Errorf("stall time by cause %v, want %v", r.StallTime, want)
		}
	})
}

// TestPreemption: a 20-block cache cannot hold four growing requests, so
// the newest are preempted and their waits are attributed to the mode.
func TestPreemption(t *testing.T) {
	reqs := func() []workloads.Request {
		return []workloads.Request{req(0, 64, 100), req(0, 64, 100), req(0, 64, 100), req(0, 64, 100)}
	}
	for _, mode := range []string{"recompute", "swap"} {
		t.Run(mode, func(t *testing.T) {
			cfg := linearConfig(1000, 10)
			cfg.KVCache.NumGPUBlocks = 20 // 320 tokens; each request reaches 164
			cfg.Scheduler.Preemption = mode
			cfg.Metrics.StallThresholdMS = 1.5
			r := runChecked(t, replay(t, cfg, reqs()...))
			if r.Finished != 4 {
				t.Fatalf("finished %d of 4 (rejected %v)", r.Finished, r.Rejected)
			}
			preempts := 0
			for _, s := range r.Streams.All() {
				preempts += s.Preemptions
				if s.OutputTokens != 100 {
					t.Errorf("request %d: %d tokens, want 100", s.ID, s.OutputTokens)
				}
			}
			if preempts == 0 || preempts != r.PreemptRecompute+r.PreemptSwap {
				t.Errorf("streams preempted %d times, result counts %d recompute + %d swap", preempts, r.PreemptRecompute, r.PreemptSwap)
			}
			swapT, recT := r.StallTime[sim.CauseKVSwap], r.StallTime[sim.CauseKVRecompute]
			if mode == "swap" {
				if r.PreemptSwap == 0 || r.PreemptRecompute != 0 || r.SwapBytes <= 0 || swapT <= 0 || recT != 0 {
					t.Errorf("swap: %d swaps, %d recomputes, %d bytes, stall kv-swap %d kv-recompute %d",
						r.PreemptSwap, r.PreemptRecompute, r.SwapBytes, swapT, recT)
				}
				// Every block swapped out comes back: bytes are an even
				// number of block copies.
				if bb := resolve(t, cfg).BlockBytes; r.SwapBytes%(2*bb) != 0 {
					t.Errorf("swap bytes %d not a whole number of out-and-back copies of %d-byte blocks", r.SwapBytes, bb)
				}
			} else {
				if r.PreemptRecompute == 0 || r.PreemptSwap != 0 || r.SwapBytes != 0 || recT <= 0 || swapT != 0 {
					t.Errorf("recompute: %d swaps, %d recomputes, %d bytes, stall kv-swap %d kv-recompute %d",
						r.PreemptSwap, r.PreemptRecompute, r.SwapBytes, swapT, recT)
				}
			}
		})
	}
}

// TestSameRequestsAcrossPolicies: every policy compared on a workload sees
// the same requests.
func TestSameRequestsAcrossPolicies(t *testing.T) {
	type key struct {
		ID      int
		Arrival sim.Time
		In, Out int
	}
	keys := func(r *sim.Result) []key {
		var ks []key
		for _, s := range r.Streams.All() {
			if s.Status != sim.StatusFinished {
				t.Fatalf("request %d %v (%v)", s.ID, s.Status, s.Reject)
			}
			ks = append(ks, key{s.ID, s.Arrival, s.InputTokens, s.OutputTokens})
		}
		slices.SortFunc(ks, func(a, b key) int { return a.ID - b.ID })
		return ks
	}
	cfg := smallDefault(200)
	src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
	if err != nil {
		t.Fatal(err)
	}
	var want []key
	for _, q := range workloads.Collect(src, 0) {
		want = append(want, key{q.ID, sim.Time(q.Arrival), q.InputTokens, q.OutputTokens})
	}
	for _, policy := range scheduler.BatcherNames() {
		cfg.Scheduler.Policy = policy
		if got := keys(mustRun(t, cfg)); !slices.Equal(got, want) {
			t.Errorf("%s served different requests than the workload generates", policy)
		}
	}
}

func TestHiccupsAndNoise(t *testing.T) {
	base := linearConfig(1000, 10)
	base.Workload.Requests = 200
	base.Workload.Rate = 20
	base.Metrics.StallThresholdMS = 10

	plain := mustRun(t, base)
	if plain.StallTime[sim.CauseEngineHiccup] != 0 {
		t.Errorf("hiccup stall time %d without hiccups", plain.StallTime[sim.CauseEngineHiccup])
	}

	hic := base
	hic.Cost.HiccupRatePerS = 2
	hic.Cost.HiccupMS = 50
	r := mustRun(t, hic)
	h := r.StallTime[sim.CauseEngineHiccup]
	// Each hiccup lengthens one step by exactly 50 ms and every stream in
	// that step stalls, so the hiccup part is a whole number of hiccups.
	if h <= 0 || h%(50*sim.Millisecond) != 0 {
		t.Errorf("hiccup stall time %d, want a positive multiple of 50 ms", h)
	}
	if r.StreamsHit[sim.CauseEngineHiccup] == 0 {
		t.Error("no stream hit by a hiccup")
	}
	if !reflect.DeepEqual(r, mustRun(t, hic)) {
		t.Error("hiccups broke determinism")
	}

	noisy := base
	noisy.Cost.NoiseCV = 0.3
	n := mustRun(t, noisy)
	if n.Duration == plain.Duration || n.Pooled.Max == plain.Pooled.Max {
		t.Errorf("noise left step times unchanged: duration %d, max gap %d", n.Duration, n.Pooled.Max)
	}
	if !reflect.DeepEqual(n, mustRun(t, noisy)) {
		t.Error("noise broke determinism")
	}
	if n.Finished != 200 || n.OutputTokens != plain.OutputTokens {
		t.Errorf("noise changed the work: finished %d, %d tokens vs %d", n.Finished, n.OutputTokens, plain.OutputTokens)
	}
}

func TestRejections(t *testing.T) {
	cfg := linearConfig(1000, 10)
	cfg.MaxModelLen = 1024
	cfg.KVCache.NumGPUBlocks = 50 // 800 tokens
	r := runChecked(t, replay(t, cfg,
		req(0, 100, 10),
		req(1, 1000, 100), // 1100 > max_model_len
		req(2, 200, 10),
		req(3, 900, 10), // 910 ≤ 1024 but 57 blocks > 50
	))
	want := map[int]scheduler.Reason{1: scheduler.ReasonTooLong, 3: scheduler.ReasonExceedsKV}
	for _, id := range []int{0, 1, 2, 3} {
		s := stream(t, r, id)
		if why, rejected := want[id]; rejected {
			if s.Status != sim.StatusRejected || s.Reject != why || s.OutputTokens != 0 {
				t.Errorf("request %d: %v (%v), %d tokens; want rejected (%v)", id, s.Status, s.Reject, s.OutputTokens, why)
			}
		} else if s.Status != sim.StatusFinished || s.OutputTokens != 10 {
			t.Errorf("request %d: %v, %d tokens; want finished, 10", id, s.Status, s.OutputTokens)
		}
	}
	if r.Rejected[scheduler.ReasonTooLong] != 1 || r.Rejected[scheduler.ReasonExceedsKV] != 1 {
		t.Errorf("rejected %v", r.Rejected)
	}
	if r.Requests != 4 || r.Requests != r.Finished+r.RejectedTotal() {
		t.Errorf("requests %d, finished %d, rejected %d", r.Requests, r.Finished, r.RejectedTotal())
	}
	if r.Streams.Len() != 4 {
		t.Errorf("%d streams, want 4", r.Streams.Len())
	}
}

func TestNewReportsConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*sim.Config)
	}{
		{"model", func(c *sim.Config) { c.Model = "no-such-model" }},
		{"policy", func(c *sim.Config) { c.Scheduler.Policy = "nope" }},
		{"budget", func(c *sim.Config) { c.Scheduler.MaxNumBatchedTokens = 8 }},
		{"cost", func(c *sim.Config) { c.Cost.Model = "linear"; c.Cost.Linear = cost.LinearConfig{C0US: -1} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.DefaultConfig()
			tc.mod(&cfg)
			if _, err := sim.New(cfg); err == nil {
				t.Error("New accepted a bad config")
			}
		})
	}
}

// TestRejectReasonNamesTheRule: a request that can never start is rejected
// with the reason that holds it back. Static batching starts whole prompts,
// and the kv-watermark rule refuses a 63-block prompt in a 100-block cache
// with a 50 % watermark; the reason should be kv-watermark, not kv-full
// (the cache is empty).
func TestRejectReasonNamesTheRule(t *testing.T) {
	cfg := linearConfig(1000, 10)
	cfg.Scheduler.Policy = "static"
	cfg.Scheduler.MaxNumBatchedTokens = 512
	cfg.Scheduler.Admission.Rule = "kv-watermark"
	cfg.Scheduler.Admission.Watermark = 0.5
	cfg.KVCache.NumGPUBlocks = 100
	r := runChecked(t, replay(t, cfg, req(0, 1000, 10)))
	if s := stream(t, r, 0); s.Status != sim.StatusRejected || s.Reject != scheduler.ReasonKVWatermark {
		t.Errorf("got %v (%v), want rejected (kv-watermark)", s.Status, s.Reject)
	}
}

// cost.step_time_scale multiplies every priced step: 1 and 0 (unset) give
// the same run byte for byte, and 2 doubles a lone request's decode gaps.
func TestStepTimeScale(t *testing.T) {
	base := linearConfig(1000, 10)
	one := replay(t, base, req(0, 100, 20)).Run()
	unset := base
	unset.Cost.StepTimeScale = 0
	if !reflect.DeepEqual(one, replay(t, unset, req(0, 100, 20)).Run()) {
		t.Error("step_time_scale 0 is not read as 1")
	}
	double := base
	double.Cost.StepTimeScale = 2
	two := replay(t, double, req(0, 100, 20)).Run()
	if two.Pooled.Max != 2*one.Pooled.Max || two.Pooled.Min != 2*one.Pooled.Min {
		t.Errorf("scale 2: gaps %d..%d, want twice %d..%d", two.Pooled.Min, two.Pooled.Max, one.Pooled.Min, one.Pooled.Max)
	}
	bad := base
	bad.Cost.StepTimeScale = -1
	if _, err := sim.New(bad); err == nil || !strings.Contains(err.Error(), "cost.step_time_scale") {
		t.Errorf("scale -1: got %v, want an error naming cost.step_time_scale", err)
	}
}

// Setup.Scaled scales the steps the replicas run, one pool or several.
func TestSetupScaled(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		cfg := linearConfig(1000, 10)
		cfg.Cluster.Replicas = replicas
		s := resolve(t, cfg)
		run := func(s *sim.Setup) *sim.Result {
			e, err := sim.NewFromSetup(s, &workloads.Slice{Requests: []workloads.Request{req(0, 100, 20)}})
			if err != nil {
				t.Fatal(err)
			}
			return e.Run()
		}
		one, two := run(s), run(s.Scaled(2))
		if two.Pooled.Max != 2*one.Pooled.Max {
			t.Errorf("%d replicas: Scaled(2) max gap %d, want %d", replicas, two.Pooled.Max, 2*one.Pooled.Max)
		}
		if !reflect.DeepEqual(one, run(s)) {
			t.Errorf("%d replicas: Scaled changed the setup it was called on", replicas)
		}
	}
}
