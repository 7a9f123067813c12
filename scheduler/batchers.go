package scheduler

// Batching policy names.
const (
	ChunkedName      = "chunked"
	PrefillFirstName = "prefill-first"
	OrcaName         = "orca"
	StaticName       = "static"
)

// chunked is vLLM v1's scheduler with chunked prefill (Sarathi-Serve's
// stall-free batching): every running decode first, then running partial
// prefills, then new prompts, each prefill chunk cut to the remaining budget
// and to the long-prefill threshold. No new request starts in a step that
// had to preempt, as in vLLM.
type chunked struct{ threshold int }

func newChunked(c Config) Batcher { return chunked{threshold: c.LongPrefillTokenThreshold} }

func (c chunked) chunk(r *Seq, budget int) int {
	n := min(r.Remaining(), budget)
	if c.threshold > 0 {
		n = min(n, c.threshold)
	}
	return n
}

func (c chunked) Plan(s *Scheduler) {
	var prefills int // running sequences with a prefill or recompute to go on with
	if s.reference {
		prefills = planDecodes(s)
	} else {
		prefills = planDecodesFast(s)
	}
	for _, r := range s.snap {
		if prefills == 0 {
			break
		}
		if r.State != Running || r.Sched > 0 || r.Decoding() {
			continue
		}
		n := c.chunk(r, s.budget)
		if n < 1 {
			break
		}
		s.scheduleRunning(r, n)
	}
	if s.preempted {
		return
	}
	for s.budget > 0 {
		r := s.nextWaiting()
		if r == nil || !s.startWaiting(r, c.chunk(r, s.budget)) {
			return
		}
	}
}

// planDecodes plans every running decode, in order, while the budget
// lasts (a decode without room for its drafts decodes plainly), and
// returns how many running sequences have a prefill to go on with.
func planDecodes(s *Scheduler) (prefills int) {
	for _, r := range s.snap {
		if r.State != Running || r.Sched > 0 {
			continue
		}
		if !r.Decoding() {
			prefills++
			continue
		}
		if s.budget < 1 {
			break
		}
		if s.budget < 1+r.Spec {
			r.Spec = 0
		}
		s.scheduleRunning(r, 1+r.Spec)
	}
	return prefills
}

// planDecodesFast is planDecodes with the plain decode whose blocks have
// room (most of them) planned in an inner loop without a call. With
// planDecodes instead, the engine's CPU time was 1.13x (the geometric mean
// of the medians of six rounds on the five benchmarks of package sim;
// docs/benchmarks-log.md, 2026-12-03): 1.15x on BenchmarkChatWorkload
// (1.03-1.21), 1.17x on BenchmarkStep (1.10-1.28).
func planDecodesFast(s *Scheduler) (prefills int) {
	kv := s.kv
	// A plain decode whose blocks have room (most of them) is planned in
	// an inner loop without a call (each would have the compiler keep the
	// loop's values in memory), addDecode's work with the budget, the
	// entries and the plan's sums in locals; they go back to s before the
	// outer loop plans any other decode.
	budget, decodes, context, es := s.budget, 0, int64(0), s.plan.Entries
	snap := s.snap
decodes:
	for i := 0; i < len(snap); i++ {
		var r *Seq
		for ; uint(i) < uint(len(snap)); i++ { // unsigned: the compiler then drops snap[i]'s bounds check
			r = snap[i]
			if r.State != Running || r.Sched > 0 {
				continue
			}
			if !r.Decoding() {
				prefills++
				continue
			}
			if budget < 1 {
				break decodes // the prefills below get no budget either
			}
			if budget < 1+r.Spec {
				r.Spec = 0 // no room for its drafts: a plain decode
			}
			if r.Spec != 0 || len(es) == cap(es) || !kv.Fits(&r.KV, r.Computed+1) {
				break
			}
			r.Sched = 1
			// The entry is written in place, over the one the plan before
			// had there (reset keeps them): in a steady batch that was the
			// same sequence, whose pointer is then not stored again (no
			// write barrier while the collector runs). Appending a
			// composite literal instead doubled this loop's time.
			es = es[:len(es)+1]
			es[len(es)-1].set(r, 1, true)
			budget--
			decodes++
			context += int64(r.Computed + 1) // Computed ≥ 0: addDecode's max(·, 0) is the same
		}
		if i == len(snap) {
			break
		}
		s.budget, s.plan.Entries = budget, es
		s.plan.DecodeSeqs += decodes
		s.plan.DecodeContext += context
		decodes, context = 0, 0
		if n := 1 + r.Spec; kv.Fits(&r.KV, r.Computed+n) {
			s.addDecode(r, n) // scheduleRunning's case when its blocks have room
		} else {
			s.scheduleRunning(r, n)
		}
		budget, es = s.budget, s.plan.Entries
	}
	s.budget, s.plan.Entries = budget, es
	s.plan.DecodeSeqs += decodes
	s.plan.DecodeContext += context
	return prefills
}

// prefillFirst is vLLM v0's default scheduler without chunked prefill: when
// no sequence is swapped out and waiting prompts fit, the step is
// prefill-only (whole prompts, up to the budget, which is at least the
// model's context length) and every decode waits; otherwise all running
// sequences decode, and swapped-out ones come back if nothing was preempted.
type prefillFirst struct{}

func newPrefillFirst(Config) Batcher { return prefillFirst{} }

func (prefillFirst) Plan(s *Scheduler) {
	s.budget = max(s.budget, s.maxModelLen)
	if s.swapped == 0 {
		for {
			r := s.nextWaiting()
			if r == nil || r.Remaining() > s.budget || !s.startWaiting(r, r.Remaining()) {
				break
			}
		}
		if !s.plan.Empty() {
			return
		}
	}
	for _, r := range s.snap {
		if r.State != Running || r.Sched > 0 {
			continue
		}
		if s.budget < r.stepTokens() {
			break
		}
		s.scheduleRunning(r, r.stepTokens())
	}
	if s.preempted {
		return
	}
	for s.swapped > 0 && s.budget > 0 {
		r := s.nextSwapped()
		if r == nil || !s.startWaiting(r, 1) {
			return
		}
	}
}

// orca is iteration-level scheduling without chunking: every running
// sequence steps, and whole waiting prompts join while the budget lasts
// (the first one joins even if it alone exceeds the budget).
type orca struct{}

func newOrca(Config) Batcher { return orca{} }

func (orca) Plan(s *Scheduler) {
	for _, r := range s.snap {
		if r.State != Running || r.Sched > 0 {
			continue
		}
		s.scheduleRunning(r, r.stepTokens())
	}
	if s.preempted {
		return
	}
	for {
		r := s.nextWaiting()
		if r == nil {
			return
		}
		n := r.Remaining()
		if r.State == Swapped {
			n = 1
		}
		if n > s.budget && s.plan.PrefillTokens > 0 {
			return
		}
		if !s.startWaiting(r, n) {
			return
		}
	}
}

// static is request-level batching: when the running set is empty, up to
// max_num_seqs waiting requests start together with their whole prompts;
// the batch then decodes until its last request finishes, and nothing new
// starts meanwhile.
type static struct{}

func newStatic(Config) Batcher { return static{} }

func (static) Plan(s *Scheduler) {
	if len(s.snap) > 0 {
		for _, r := range s.snap {
			if r.State != Running || r.Sched > 0 {
				continue
			}
			s.scheduleRunning(r, r.stepTokens())
		}
		return
	}
	for {
		r := s.nextWaiting()
		if r == nil {
			return
		}
		n := r.Remaining()
		if r.State == Swapped {
			n = 1
		}
		if !s.startWaiting(r, n) {
			return
		}
	}
}

var (
	_ Batcher = chunked{}
	_ Batcher = prefillFirst{}
	_ Batcher = orca{}
	_ Batcher = static{}
)
