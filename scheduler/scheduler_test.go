package scheduler

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/kvcache"
)

func newSched(t *testing.T, policy string, blocks, budget int, mod func(*Config)) (*Scheduler, *kvcache.Manager) {
	t.Helper()
	kv, err := kvcache.New(blocks, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Policy = policy
	c.MaxNumBatchedTokens = budget
	c.MaxNumSeqs = 64
	if mod != nil {
		mod(&c)
	}
	s, err := New(c, kv, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return s, kv
}

func noReject(t *testing.T) func(*Seq, Reason) {
	return func(s *Seq, r Reason) { t.Fatalf("request %d rejected at schedule time: %v", s.ID, r) }
}

// run applies a plan the way the engine does: computed tokens advance and a
// finished sequence leaves.
func apply(s *Scheduler, p *Plan) (sampled int) {
	for _, e := range p.Entries {
		if e.Seq.Advance(e.Tokens) {
			sampled++
			if e.Seq.Done() {
				s.Finish(e.Seq)
			}
		}
	}
	return sampled
}

func TestChunkedFillsBudgetDecodesFirst(t *testing.T) {
	s, _ := newSched(t, ChunkedName, 1000, 512, nil)
	a := &Seq{ID: 1, Prompt: 100, Output: 10}
	b := &Seq{ID: 2, Arrival: 1, Prompt: 1000, Output: 10}
	s.Arrive(0, a)
	s.Arrive(1, b)
	p := s.Schedule(0, noReject(t))
	if len(p.Entries) != 2 || p.Entries[0].Tokens != 100 || p.Entries[1].Tokens != 412 {
		t.Fatalf("first step: got %+v, want a's 100-token prompt then a 412-token chunk of b", p.Entries)
	}
	apply(s, p)
	p = s.Schedule(1, noReject(t))
	// a decodes first (1 token), then b's remaining 588 tokens are cut to the 511 left.
	if len(p.Entries) != 2 || !p.Entries[0].Decode || p.Entries[0].Seq != a || p.Entries[1].Tokens != 511 || p.Entries[1].Start != 412 {
		t.Fatalf("second step: got %+v", p.Entries)
	}
}

func TestPrefillFirstPausesDecodes(t *testing.T) {
	s, _ := newSched(t, PrefillFirstName, 1000, 512, nil)
	a := &Seq{ID: 1, Prompt: 100, Output: 10}
	s.Arrive(0, a)
	apply(s, s.Schedule(0, noReject(t)))
	b := &Seq{ID: 2, Arrival: 1, Prompt: 3000, Output: 10}
	s.Arrive(1, b)
	p := s.Schedule(1, noReject(t))
	if len(p.Entries) != 1 || p.Entries[0].Seq != b || p.Entries[0].Tokens != 3000 {
		t.Fatalf("got %+v, want a prefill-only step of b's whole 3000-token prompt (budget raised to the context)", p.Entries)
	}
	if a.Sched != 0 {
		t.Fatal("a decoded during a prefill-only step")
	}
}

func TestPreemptNewestRecompute(t *testing.T) {
	// 10 blocks of 16 tokens; two sequences of 64-token prompts fill 8.
	s, kv := newSched(t, ChunkedName, 10, 512, nil)
	a := &Seq{ID: 1, Prompt: 64, Output: 60}
	b := &Seq{ID: 2, Arrival: 1, Prompt: 64, Output: 60}
	s.Arrive(0, a)
	s.Arrive(0, b)
	apply(s, s.Schedule(0, noReject(t)))
	var preempted *Seq
	for step := 0; step < 100 && preempted == nil; step++ {
		p := s.Schedule(int64(step), noReject(t))
		if len(p.Preempted) > 0 {
			preempted = p.Preempted[0].Seq
			if p.Preempted[0].Mode != Recompute {
				t.Fatalf("mode %v, want recompute", p.Preempted[0].Mode)
			}
		}
		apply(s, p)
	}
	if preempted != b {
		t.Fatalf("preempted %v, want the newest (b)", preempted)
	}
	if b.State != Evicted || b.Computed != 0 || b.KV.Blocks != 0 {
		t.Fatalf("evicted sequence state %v computed %d blocks %d", b.State, b.Computed, b.KV.Blocks)
	}
	if s.nextWaiting() != b {
		t.Fatal("an evicted sequence must be next to start, ahead of the queue")
	}
	_ = kv
}

func TestSwapFallsBackToRecompute(t *testing.T) {
	kv, _ := kvcache.New(10, 16, 0) // no swap space
	c := DefaultConfig()
	c.MaxNumBatchedTokens, c.MaxNumSeqs, c.Preemption = 512, 64, "swap"
	s, err := New(c, kv, 4096)
	if err != nil {
		t.Fatal(err)
	}
	a := &Seq{ID: 1, Prompt: 64, Output: 60}
	b := &Seq{ID: 2, Arrival: 1, Prompt: 64, Output: 60}
	s.Arrive(0, a)
	s.Arrive(0, b)
	for step := 0; step < 100; step++ {
		p := s.Schedule(int64(step), noReject(t))
		for _, pr := range p.Preempted {
			if pr.Mode != Recompute {
				t.Fatalf("swapped with no swap space")
			}
			return
		}
		apply(s, p)
	}
	t.Fatal("no preemption happened")
}

func TestKVReserveNeverPreempts(t *testing.T) {
	s, _ := newSched(t, ChunkedName, 20, 512, func(c *Config) { c.Admission.Rule = KVReserveName })
	seqs := []*Seq{}
	for i := range 6 {
		q := &Seq{ID: i, Arrival: int64(i), Prompt: 40, Output: 60} // 7 blocks each when complete
		s.Arrive(int64(i), q)
		seqs = append(seqs, q)
	}
	for step := 0; s.HasWork(); step++ {
		if step > 10000 {
			t.Fatal("did not finish")
		}
		p := s.Schedule(int64(step), noReject(t))
		if len(p.Preempted) > 0 {
			t.Fatalf("step %d: kv-reserve preempted %d", step, p.Preempted[0].Seq.ID)
		}
		if len(s.running) > 2 {
			t.Fatalf("step %d: %d running; only 2 reservations of 7 blocks fit in 20", step, len(s.running))
		}
		apply(s, p)
	}
	for _, q := range seqs {
		if q.State != Finished || q.Generated != q.Output {
			t.Fatalf("request %d: state %v generated %d/%d", q.ID, q.State, q.Generated, q.Output)
		}
	}
}

func TestMaxQueueRejects(t *testing.T) {
	s, _ := newSched(t, ChunkedName, 100, 512, func(c *Config) { c.Admission.Rule, c.Admission.MaxQueue = MaxQueueName, 2 })
	var got []Verdict
	for i := range 3 {
		got = append(got, s.Arrive(0, &Seq{ID: i, Prompt: 10, Output: 5}).Verdict)
	}
	if got[2] != Reject {
		t.Fatalf("verdicts %v, want the third rejected", got)
	}
	if d := s.Arrive(0, &Seq{ID: 9, Prompt: 10, Output: 5000}); d.Reason != ReasonTooLong {
		t.Fatalf("prompt+output beyond the context: %+v", d)
	}
}

func TestTokenBucketRefills(t *testing.T) {
	s, _ := newSched(t, ChunkedName, 100, 512, func(c *Config) {
		c.Admission.Rule, c.Admission.TokensPerS, c.Admission.BurstTokens = TokenBucketName, 100, 100
	})
	if d := s.Arrive(0, &Seq{ID: 1, Prompt: 50, Output: 50}); d.Verdict != Admit {
		t.Fatalf("first: %+v", d)
	}
	if d := s.Arrive(0, &Seq{ID: 2, Prompt: 50, Output: 50}); d.Reason != ReasonRateLimited {
		t.Fatalf("second at once: %+v", d)
	}
	if d := s.Arrive(1e9, &Seq{ID: 3, Prompt: 50, Output: 50}); d.Verdict != Admit {
		t.Fatalf("after a second: %+v", d)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Policy = "fifo" }, "scheduler.policy: unknown policy \"fifo\"; valid: chunked, orca, prefill-first, static"},
		{func(c *Config) { c.Admission.Rule = "x" }, "scheduler.admission.rule"},
		{func(c *Config) { c.Queue = "lifo" }, "scheduler.queue"},
		{func(c *Config) { c.Preemption = "drop" }, "scheduler.preemption"},
		{func(c *Config) { c.MaxNumSeqs = -1 }, "scheduler.max_num_seqs"},
		{func(c *Config) { c.Admission.Watermark = 1.5 }, "scheduler.admission.watermark"},
	} {
		cfg := DefaultConfig()
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func TestDefaultLimitsFollowVLLM(t *testing.T) {
	for _, c := range []struct {
		name      string
		mem       int64
		tok, seqs int
	}{
		{"h100-sxm-80gb", 80e9, 8192, 1024},
		{"a100-80gb", 80e9, 2048, 256},
		{"l40s", 48e9, 2048, 256},
		{"mi300x", 192e9, 8192, 1024},
	} {
		tok, seqs := DefaultLimits(c.name, c.mem)
		if tok != c.tok || seqs != c.seqs {
			t.Errorf("%s: got %d/%d, want %d/%d", c.name, tok, seqs, c.tok, c.seqs)
		}
	}
}

// Abort cancels a sequence in each state it can be in — queued, running,
// swapped out, evicted — and gives back every block, swap block and
// reservation it held; the others carry on and finish.
func TestAbortEveryState(t *testing.T) {
	for _, c := range []struct {
		name  string
		swap  bool
		state State
	}{
		{"waiting", false, Waiting},
		{"running", false, Running},
		{"evicted", false, Evicted},
		{"swapped", true, Swapped},
	} {
		t.Run(c.name, func(t *testing.T) {
			// 10 blocks of 16 tokens: two 64-token prompts growing to 124
			// tokens cannot both fit, so the newer one is preempted.
			s, kv := newSched(t, ChunkedName, 10, 512, func(cfg *Config) {
				cfg.Admission.Rule = "kv-reserve"
				cfg.Admission.ReserveOutputTokens = 1
				if c.swap {
					cfg.Preemption = "swap"
				}
			})
			a := &Seq{ID: 1, Prompt: 64, Output: 60}
			b := &Seq{ID: 2, Arrival: 1, Prompt: 64, Output: 60}
			s.Arrive(0, a)
			s.Arrive(0, b)
			if c.state == Waiting {
				s.Abort(b) // before any step: still queued
			}
			for step := 0; step < 200 && b.State != c.state && b.State != Aborted; step++ {
				apply(s, s.Schedule(int64(step), noReject(t)))
			}
			if b.State != c.state && b.State != Aborted {
				t.Fatalf("b never reached %v (it is %v)", c.state, b.State)
			}
			s.Abort(b)
			if b.State != Aborted || b.KV.Blocks != 0 || b.KV.Swapped != 0 || b.Reserved != 0 {
				t.Fatalf("after Abort: state %v, %d blocks, %d swapped, %d reserved", b.State, b.KV.Blocks, b.KV.Swapped, b.Reserved)
			}
			for _, r := range s.Running() {
				if r == b {
					t.Fatal("an aborted sequence is still running")
				}
			}
			want := 0 // only a may wait
			if a.State != Running {
				want = 1
			}
			if s.Waiting() != want {
				t.Fatalf("%d waiting after the abort, want %d (a is %v)", s.Waiting(), want, a.State)
			}
			for step := 0; step < 500 && a.State != Finished; step++ {
				apply(s, s.Schedule(int64(step), noReject(t)))
			}
			if a.State != Finished {
				t.Fatalf("a did not finish after b was aborted: %v", a.State)
			}
			if kv.Free() != kv.Total() || kv.SwapFree() != kv.SwapTotal() {
				t.Errorf("blocks leaked: free %d/%d, swap %d/%d", kv.Free(), kv.Total(), kv.SwapFree(), kv.SwapTotal())
			}
			s.Abort(a) // a finished sequence is left alone
			if a.State != Finished {
				t.Errorf("Abort changed a finished sequence to %v", a.State)
			}
		})
	}
}

func TestPauseHoldsBlocksThenRecomputesNewestOnDeadlock(t *testing.T) {
	// 10 blocks of 16 tokens; prompts of 64 and 72 tokens take 4 and 5
	// blocks, so the two reach a block boundary at different steps and
	// one decodes while the other is paused, until both need a block.
	s, kv := newSched(t, ChunkedName, 10, 512, func(c *Config) { c.Preemption = "pause" })
	a := &Seq{ID: 1, Prompt: 64, Output: 80}
	b := &Seq{ID: 2, Arrival: 1, Prompt: 72, Output: 80}
	s.Arrive(0, a)
	s.Arrive(0, b)
	apply(s, s.Schedule(0, noReject(t)))
	pausedWhileOtherRan, starts, episodes := false, 0, 0
	var evicted *Seq
	for step := 1; step < 400 && (a.State != Finished || b.State != Finished); step++ {
		p := s.Schedule(int64(step), noReject(t))
		for _, q := range p.Paused {
			if q.KV.Blocks+q.KV.SharedBlocks == 0 {
				t.Fatalf("step %d: paused request %d holds no blocks", step, q.ID)
			}
			if !q.wasPaused {
				episodes++
			}
		}
		starts += p.PauseStarts
		if len(p.Paused) > 0 && !p.Empty() {
			pausedWhileOtherRan = true
		}
		if len(p.Preempted) > 0 && evicted == nil {
			pr := p.Preempted[0]
			evicted = pr.Seq
			if pr.Mode != Recompute || pr.Seq != b {
				t.Fatalf("step %d: deadlock broken by %v of request %d, want recompute of the newest (2)", step, pr.Mode, pr.Seq.ID)
			}
			if p.Empty() || p.Entries[0].Seq != a {
				t.Fatalf("step %d: after the deadlock break a must grow in the same step, plan %+v", step, p.Entries)
			}
		}
		if len(p.Preempted) > 0 && len(p.Paused) == 0 && !pausedWhileOtherRan {
			t.Fatalf("step %d: a preemption before any pause", step)
		}
		if p.Empty() {
			t.Fatalf("step %d: empty plan with work left (a pause deadlock was not broken): a %v %+v b %v %+v free %d", step, a.State, a.KV, b.State, b.KV, kv.Free())
		}
		apply(s, p)
		var live []kvcache.Alloc
		for _, q := range []*Seq{a, b} {
			if q.State != Finished {
				live = append(live, q.KV)
			}
		}
		if err := kv.Check(live); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if !pausedWhileOtherRan {
		t.Fatal("no step decoded one sequence while the other was paused")
	}
	if evicted == nil {
		t.Fatal("the two sequences never deadlocked: the test no longer exercises the deadlock rule")
	}
	if starts != episodes || starts == 0 {
		t.Fatalf("PauseStarts summed to %d, %d pause episodes seen", starts, episodes)
	}
	if a.State != Finished || b.State != Finished {
		t.Fatalf("states %v %v, want both finished", a.State, b.State)
	}
}
