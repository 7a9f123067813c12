package scheduler

import (
	"fmt"
	"slices"

	"github.com/itlsim/itlsim/kvcache"
)

// Batcher forms one step's batch by calling the Scheduler's planning
// helpers (scheduleRunning, nextWaiting, startWaiting).
type Batcher interface {
	Plan(s *Scheduler)
}

// Scheduler holds the waiting queue and running set of one replica and forms
// each step's plan. It is a plain value: several replicas each own one.
type Scheduler struct {
	cfg         Config
	kv          *kvcache.Manager
	maxModelLen int
	batcher     Batcher
	admission   Admission
	victim      Victim
	swap        bool
	pause       bool

	waiting queue
	resume  []*Seq // preempted sequences, most recently preempted last; they start before the queue
	swapped int    // sequences in resume that are swapped out
	running []*Seq // in the order they entered the running set
	ended   bool   // a sequence of running finished or was aborted: compact drops it

	plan       Plan
	waitReason Reason // why the last waiting sequence tried could not start
	budget     int
	preempted  bool
	startCount uint64
	// recomputeTokens and recomputeCached count, over restarts of
	// sequences evicted for recompute, the tokens whose KV they needed
	// again and how many of those the prefix cache still held.
	recomputeTokens, recomputeCached int64
	forced                           []Preemption // preemptions that broke a pause deadlock, kept across replanning
	// snap is the running set as planning began, which the batchers
	// iterate while preemptions leave it and new sequences join. It is
	// s.running itself until a preemption changes the running set
	// (snapShared): the running set then moves to runSpare's array, and
	// snap keeps the old one. New sequences are appended past its length.
	snap       []*Seq
	snapShared bool
	runSpare   []*Seq
	cand       []*Seq // scratch: preemption candidates
	view       View
	// reference plans every decode through the general case
	// (SetReference).
	reference bool
}

// New builds a scheduler over kv for a model of maxModelLen tokens of context.
// cfg must have its limits filled (see Config.WithDefaults).
func New(cfg Config, kv *kvcache.Manager, maxModelLen int) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxNumSeqs < 1 || cfg.MaxNumBatchedTokens < 1 {
		return nil, fmt.Errorf("scheduler: limits not set: max_num_seqs %d, max_num_batched_tokens %d", cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens)
	}
	if cfg.Policy != PrefillFirstName && cfg.Policy != StaticName && cfg.MaxNumBatchedTokens < kv.BlockSize() {
		return nil, fmt.Errorf("scheduler.max_num_batched_tokens: a budget of %d tokens is below one KV block (%d tokens)", cfg.MaxNumBatchedTokens, kv.BlockSize())
	}
	s := &Scheduler{
		cfg:         cfg,
		kv:          kv,
		maxModelLen: maxModelLen,
		batcher:     batchers[cfg.Policy].new(cfg),
		admission:   admissions[cfg.Admission.Rule].new(cfg.Admission),
		victim:      victims[cfg.Victim].new(),
		swap:        cfg.Preemption == "swap",
		pause:       cfg.Preemption == "pause",
		waiting:     queue{order: orders[cfg.Queue].new()},
	}
	s.view.KV = kv
	return s, nil
}

// SetReference makes the scheduler plan every decode through its general
// case (scheduleRunning) instead of chunked's inlined decode loop; the
// plans are the same. The engine's reference step sets it (sim.Config.Reference),
// and tests hold the two equal.
func (s *Scheduler) SetReference(on bool) { s.reference = on }

// Config returns the scheduler's resolved configuration.
func (s *Scheduler) Config() Config { return s.cfg }

// Running returns the running set (prefilling and decoding sequences).
func (s *Scheduler) Running() []*Seq { s.compact(false); return s.running }

// Waiting is the number of requests waiting to start, preempted ones included.
func (s *Scheduler) Waiting() int { return s.waiting.Len() + len(s.resume) }

// Preempted is the number of preempted sequences waiting to resume.
func (s *Scheduler) Preempted() int { return len(s.resume) }

// HasWork reports whether any request is running or waiting.
func (s *Scheduler) HasWork() bool {
	return len(s.running) > 0 || s.waiting.Len() > 0 || len(s.resume) > 0
}

func (s *Scheduler) setView(now int64) {
	s.view.Now = now
	s.view.Waiting = s.Waiting()
	s.view.Running = len(s.running)
}

// Arrive offers a new request. It is queued (Admit) or refused (Reject,
// with the reason); a refused request's State becomes Rejected.
func (s *Scheduler) Arrive(now int64, q *Seq) Decision {
	d := admit
	switch {
	case q.Prompt+q.Output > s.maxModelLen:
		d = Decision{Reject, ReasonTooLong}
	case s.kv.BlocksFor(q.Prompt+q.Output) > s.kv.Total():
		d = Decision{Reject, ReasonExceedsKV}
	default:
		s.setView(now)
		d = s.admission.OnArrival(q, &s.view)
	}
	if d.Verdict != Admit {
		q.State = Rejected
		return d
	}
	q.State = Waiting
	s.waiting.Push(q)
	return d
}

// RecomputeStats returns, over restarts of sequences evicted for
// recompute, the tokens whose KV they needed again (all but the last,
// which is computed to sample) and how many the prefix cache still held:
// the share a recompute did not have to compute.
func (s *Scheduler) RecomputeStats() (tokens, cached int64) {
	return s.recomputeTokens, s.recomputeCached
}

// Finish releases a finished sequence's blocks and removes it from the running set.
func (s *Scheduler) Finish(q *Seq) {
	s.kv.DropPrefix(&q.KV)
	s.kv.Release(&q.KV)
	s.admission.Released(q)
	if q.State == Running {
		s.ended = true
	}
	q.State = Finished
}

// Abort cancels q wherever it is — queued, preempted (swapped out or
// evicted) or running — and releases its blocks and its admission
// reservation, as vLLM's abort_request does when a client disconnects. Call
// it between steps, never while a plan that holds q is in flight. Its State
// becomes Aborted; a sequence that already ended is left alone.
func (s *Scheduler) Abort(q *Seq) {
	switch q.State {
	case Waiting:
		s.waiting.remove(q)
	case Swapped, Evicted:
		s.popWaiting(q)
	case Running:
		// compact drops it from the running set.
	default:
		return
	}
	s.kv.DropPrefix(&q.KV)
	s.kv.Release(&q.KV)
	s.admission.Released(q)
	q.Sched, q.Spec = 0, 0
	if q.State == Running {
		s.ended = true
	}
	q.State = Aborted
	s.compact(false)
}

// Schedule forms the next step at time now. The plan is empty when nothing
// can run; Rejected then lists requests that can never start (nothing runs,
// so nothing will free the blocks or the reservation they wait for).
func (s *Scheduler) Schedule(now int64, rejected func(*Seq, Reason)) *Plan {
	p := s.schedule(now, rejected)
	if s.kv.Tiers() > 0 {
		// Loads for a start that did not stick wait for the next step
		// that runs: the blocks stay cached on the GPU meanwhile.
		p.TierLoads = [kvcache.MaxTiers]int{}
		if !p.Empty() {
			p.TierLoads = s.kv.TakeTierLoads()
		}
	}
	return p
}

func (s *Scheduler) schedule(now int64, rejected func(*Seq, Reason)) *Plan {
	s.compact(true)
	clear(s.forced)
	s.forced = s.forced[:0]
	for again := false; ; again = true {
		s.plan.reset()
		s.budget = s.cfg.MaxNumBatchedTokens
		s.preempted = len(s.forced) > 0
		s.plan.Preempted = append(s.plan.Preempted, s.forced...)
		s.waitReason = ReasonNone
		if again {
			for _, r := range s.running {
				r.Sched, r.Paused = 0, false
			}
		}
		s.setView(now)
		s.snap, s.snapShared = s.running, true
		s.batcher.Plan(s)
		s.snapShared = false
		if s.plan.Empty() && len(s.plan.Paused) > 0 {
			// Every sequence that could run is paused: no step would free
			// a block. The victim rule's sequence is recomputed, as vLLM
			// would preempt it, and the step is planned again.
			for _, r := range s.plan.Paused {
				r.Paused = false
			}
			s.preemptOne(false)
			s.forced = append(s.forced, s.plan.Preempted[len(s.plan.Preempted)-1])
			continue
		}
		if !s.plan.Empty() || len(s.running) > 0 {
			return &s.plan
		}
		head := s.nextWaiting()
		if head == nil {
			return &s.plan
		}
		// Nothing runs and the head cannot start: it never will.
		if head.State != Waiting {
			panic(fmt.Sprintf("scheduler: preempted request %d cannot restart although nothing runs", head.ID))
		}
		s.popWaiting(head)
		s.kv.DropPrefix(&head.KV)
		s.kv.Release(&head.KV)
		s.admission.Released(head)
		head.State = Rejected
		r := s.waitReason
		if r == ReasonNone {
			r = ReasonKVFull
		}
		rejected(head, r)
	}
}

// compact drops sequences that left the running set; with reset it also
// clears each running sequence's per-plan fields, in the same pass.
func (s *Scheduler) compact(reset bool) {
	if !s.ended {
		if reset {
			for _, r := range s.running {
				r.wasPaused, r.Paused, r.Sched = r.Paused, false, 0
			}
		}
		return
	}
	s.ended = false
	j := 0
	for i, r := range s.running {
		if r.State != Running {
			continue
		}
		if reset {
			r.wasPaused, r.Paused, r.Sched = r.Paused, false, 0
		}
		if j != i { // a pointer stored only where the set moved (a write barrier while the collector runs)
			s.running[j] = r
		}
		j++
	}
	clear(s.running[j:])
	s.running = s.running[:j]
}

// add plans n tokens of r.
func (s *Scheduler) add(r *Seq, n int) {
	if r.Decoding() {
		s.addDecode(r, n)
		return
	}
	r.Sched = n
	s.entry(r, n, false)
	s.budget -= n
	s.plan.PrefillTokens += n
}

// addDecode plans r's decode of n tokens (1 + its drafts): add for a
// sequence known to be decoding, which the batchers' decode loops call
// directly when its blocks have room.
func (s *Scheduler) addDecode(r *Seq, n int) {
	r.Sched = n
	s.entry(r, n, true)
	s.budget -= n
	p := &s.plan
	p.DecodeSeqs++
	ctx := int64(max(r.Computed+1, 0))
	p.DecodeContext += ctx
	if k := n - 1; k > 0 {
		p.DecodeDrafts += int64(k)
		p.DraftContext += int64(k) * ctx
		p.MaxDrafts = max(p.MaxDrafts, k)
	}
}

// entry appends r's entry of n tokens to the plan.
func (s *Scheduler) entry(r *Seq, n int, dec bool) {
	s.plan.Entries = append(s.plan.Entries, Entry{Seq: r, Start: r.Computed, Tokens: n, Decode: dec, Slot: int32(r.Slot)})
}

// set makes e r's entry of n tokens, storing r only if e held another
// sequence (planDecodesFast).
func (e *Entry) set(r *Seq, n int, dec bool) {
	if e.Seq != r {
		e.Seq = r
	}
	e.Start, e.Tokens, e.Decode, e.Slot = r.Computed, n, dec, int32(r.Slot)
}

// scheduleRunning schedules n tokens of running sequence r, preempting
// unscheduled running sequences until its blocks fit, or, under pause,
// pausing r itself. It reports false when r was preempted or paused.
func (s *Scheduler) scheduleRunning(r *Seq, n int) bool {
	for !s.kv.Grow(&r.KV, r.Computed+n) {
		if s.pause {
			s.pauseSeq(r)
			return false
		}
		if s.preemptOne(s.swap) == r {
			return false
		}
	}
	s.add(r, n)
	return true
}

// pauseSeq leaves r out of the step with its blocks: it tries again next
// step. Like a preemption, a pause keeps new requests from starting in the
// step, so they do not take the blocks the paused sequences wait for.
func (s *Scheduler) pauseSeq(r *Seq) {
	r.Paused, r.Spec = true, 0
	s.plan.Paused = append(s.plan.Paused, r)
	if !r.wasPaused {
		s.plan.PauseStarts++
	}
	s.preempted = true
}

// preemptOne preempts the victim among unscheduled running sequences, by
// swap when swap is set and swap space holds it, else by recompute.
func (s *Scheduler) preemptOne(swap bool) *Seq {
	s.cand = s.cand[:0]
	for _, r := range s.running {
		if r.State == Running && r.Sched == 0 {
			s.cand = append(s.cand, r)
		}
	}
	if len(s.cand) == 0 {
		panic("scheduler: the cache cannot grow and no unscheduled sequence is left to preempt")
	}
	v := s.cand[s.victim.Pick(s.cand)]
	clear(s.cand)
	s.preempted = true
	if i := slices.Index(s.running, v); i >= 0 {
		if s.snapShared {
			// The plan's snapshot is this array: the running set moves.
			moved := append(append(s.runSpare[:0], s.running[:i]...), s.running[i+1:]...)
			s.running, s.runSpare, s.snapShared = moved, s.running, false
		} else {
			s.running = slices.Delete(s.running, i, i+1)
		}
	}
	v.Spec = 0
	p := Preemption{Seq: v, Mode: Recompute, Blocks: v.KV.Blocks}
	if swap && v.Computed > 0 {
		// Its cached blocks are copied out too and stay cached on the GPU,
		// unreferenced: a swapped-out sequence pins nothing there.
		cached := v.KV.SharedBlocks
		s.kv.ReleasePrefix(&v.KV, &v.Content)
		if n, ok := s.kv.SwapOut(&v.KV, cached); ok {
			p.Mode, p.Blocks = Swap, n
			s.plan.SwapOutBlocks += n
			v.State = Swapped
			s.swapped++
		}
	}
	if p.Mode == Recompute {
		s.kv.ReleasePrefix(&v.KV, &v.Content)
		s.kv.Release(&v.KV)
		v.Computed = 0
		v.State = Evicted
	}
	s.plan.Preempted = append(s.plan.Preempted, p)
	s.resume = append(s.resume, v)
	return v
}

// nextWaiting returns the next sequence to start: the most recently
// preempted one, else the queue's head; nil when none waits.
func (s *Scheduler) nextWaiting() *Seq {
	if n := len(s.resume); n > 0 {
		return s.resume[n-1]
	}
	return s.waiting.Peek()
}

func (s *Scheduler) popWaiting(r *Seq) {
	if r.State == Swapped || r.State == Evicted {
		i := slices.Index(s.resume, r)
		if i < 0 {
			panic("scheduler: a preempted sequence is missing from the resume list")
		}
		s.resume = slices.Delete(s.resume, i, i+1)
		if r.State == Swapped {
			s.swapped--
		}
		return
	}
	s.waiting.Pop()
}

// nextSwapped returns the most recently preempted swapped-out sequence, nil if none.
func (s *Scheduler) nextSwapped() *Seq {
	for i := len(s.resume) - 1; i >= 0; i-- {
		if s.resume[i].State == Swapped {
			return s.resume[i]
		}
	}
	return nil
}

// startWaiting moves the next waiting sequence r into the running set with
// n tokens scheduled (a swapped-out one is swapped in and decodes one
// token). It reports false, changing nothing, when r cannot start now.
func (s *Scheduler) startWaiting(r *Seq, n int) bool {
	if len(s.running) >= s.cfg.MaxNumSeqs || n < 1 {
		return false
	}
	if r.State == Swapped {
		// It decodes one token, or continues the prefill it was preempted in.
		r.Spec = 0
		n = min(n, r.Remaining())
		if max(r.KV.Swapped, s.kv.BlocksFor(r.Computed+n)) > s.kv.Free() {
			return false
		}
		s.popWaiting(r)
		blocks, _ := s.kv.SwapIn(&r.KV)
		s.plan.SwapInBlocks += blocks
		s.plan.SwappedIn = append(s.plan.SwappedIn, r)
		if !s.kv.Grow(&r.KV, r.Computed+n) {
			panic("scheduler: swapped-in sequence cannot grow after the free check")
		}
		s.enter(r)
		s.add(r, n)
		return true
	}
	// A (re)starting prefill first takes what the prefix cache holds of
	// its tokens — a new prompt's shared prefix, or most of a recomputed
	// sequence's own prompt and output — and gives it back if it cannot
	// start after all. At least the last token is computed, to sample.
	hit, lookup := 0, r.Computed == 0 && s.kv.PrefixCaching()
	if lookup {
		hit = s.kv.AcquirePrefix(&r.KV, &r.Content, r.Tokens()-1)
		r.Computed = hit
		n = min(n, r.Remaining())
	}
	undo := func() {
		if hit > 0 || r.KV.SharedBlocks > 0 {
			s.kv.ReleasePrefix(&r.KV, &r.Content)
			r.Computed = 0
		}
	}
	need := s.kv.Need(&r.KV, r.Computed+n)
	// A preempted sequence was admitted once; when nothing runs, nothing
	// would ever free what a rule waits for, so it restarts on fit alone.
	if r.State == Waiting || len(s.running) > 0 {
		if d := s.admission.CanStart(r, need, &s.view); d.Verdict != Admit {
			s.waitReason = d.Reason
			undo()
			return false
		}
	}
	if !s.kv.Grow(&r.KV, r.Computed+n) {
		s.waitReason = ReasonKVFull
		undo()
		return false
	}
	if lookup {
		s.kv.CountPrefixLookup(r.Tokens(), hit)
	}
	if r.State == Evicted {
		s.recomputeTokens += int64(r.Tokens() - 1)
		s.recomputeCached += int64(hit)
	}
	s.popWaiting(r)
	s.admission.Started(r, &s.view)
	s.enter(r)
	s.add(r, n)
	return true
}

func (s *Scheduler) enter(r *Seq) {
	s.startCount++
	r.startOrder = s.startCount
	r.State = Running
	s.running = append(s.running, r)
}
