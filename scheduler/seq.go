package scheduler

import "github.com/itlsim/itlsim/kvcache"

// State is where a sequence is in its life.
type State uint8

// Sequence states. A sequence moves Waiting → Running → Finished, and may
// leave Running for Swapped or Evicted (preempted) and come back.
const (
	Waiting  State = iota // queued, not started
	Running               // in the running set: prefilling or decoding
	Swapped               // preempted; its blocks are in CPU swap space
	Evicted               // preempted; its blocks were freed and it will re-prefill
	Finished              // generated all its tokens
	Rejected              // refused by admission
	Aborted               // cancelled by its client before it finished (Scheduler.Abort)
)

var stateNames = [...]string{"waiting", "running", "swapped", "evicted", "finished", "rejected", "aborted"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Seq is the scheduler's view of one request. Token accounting follows
// vLLM v1: the sequence holds Prompt+Generated tokens, of which Computed
// have their KV in the cache; a step computes some of the rest, and when
// all are computed the model samples the next token.
type Seq struct {
	// The fields every step reads or writes come first, on one cache line:
	// a cluster keeps thousands of sequences running.
	State     State
	Paused    bool // see below
	wasPaused bool // paused in the previous plan: the pause goes on
	Prompt    int  // prompt tokens
	Output    int  // tokens to generate (max_tokens with ignore_eos)
	Generated int  // tokens sampled so far
	Computed  int  // tokens whose KV is in the cache
	Sched     int  // tokens scheduled in the plan being formed; 0 when not scheduled
	// Spec is how many draft tokens the sequence's next decode verifies
	// (speculative decoding); 0 for a plain decode. The engine sets it
	// before each plan; the scheduler clears it when the budget cannot
	// hold the drafts.
	Spec int
	Slot int // the caller's handle for the sequence (the engine's slot index)
	KV   kvcache.Alloc

	ID       int   // request id, unique within a run
	Arrival  int64 // arrival time, ns
	Priority int   // lower is more important (vLLM's convention)
	Reserved int   // KV blocks reserved for it by admission (kv-reserve)
	// Content names the sequence's tokens for automatic prefix caching:
	// every full block it computes is cached under its content id, and a
	// (re)starting prefill takes the leading blocks still cached.
	Content kvcache.Content
	// Paused (above) reports that the plan being formed left the sequence
	// out because its blocks could not grow (preemption pause): it keeps them.

	startOrder uint64 // when it last entered the running set, for newest-first preemption
	heapIdx    int
}

// Tokens is the sequence's length: prompt plus sampled tokens.
func (s *Seq) Tokens() int { return s.Prompt + s.Generated }

// Remaining is how many tokens must be computed before the next sample.
func (s *Seq) Remaining() int { return s.Prompt + s.Generated - s.Computed }

// Decoding reports whether the next step for the sequence is a one-token
// decode (as opposed to a prefill chunk or a recompute).
func (s *Seq) Decoding() bool { return s.Generated > 0 && s.Remaining() == 1 }

// stepTokens is what the sequence computes in its next step: a decode (with
// its draft tokens) or the rest of its prefill.
func (s *Seq) stepTokens() int {
	if s.Decoding() {
		return 1 + s.Spec
	}
	return s.Remaining()
}

// Verify records a decode step that verified drafts and accepted accepted
// of them: the pending token and the accepted drafts are now computed, and
// accepted + 1 tokens (the drafts and the bonus or corrected token) are
// sampled. It returns how many tokens became visible.
func (s *Seq) Verify(accepted int) int {
	if !s.Decoding() {
		panic("scheduler: Verify on a sequence that is not decoding")
	}
	accepted = max(0, min(accepted, s.Output-s.Generated-1))
	s.Computed += 1 + accepted
	s.Generated += 1 + accepted
	return 1 + accepted
}

// Done reports whether the sequence has generated all its tokens.
func (s *Seq) Done() bool { return s.Generated >= s.Output }

// Advance records that tokens tokens were computed in a step and reports
// whether that completed the sequence's pending tokens, so a new token was
// sampled (and becomes visible at the end of the step).
func (s *Seq) Advance(tokens int) bool {
	s.Computed += tokens
	if s.Computed > s.Tokens() {
		panic("scheduler: computed more tokens than the sequence holds")
	}
	if s.Computed == s.Tokens() {
		s.Generated++
		return true
	}
	return false
}
