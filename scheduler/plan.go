package scheduler

import "github.com/itlsim/itlsim/kvcache"

// Entry is one sequence's work in a step: Tokens tokens computed from
// position Start (the tokens already in the cache).
type Entry struct {
	Seq    *Seq
	Start  int
	Tokens int
	Decode bool // a one-token decode, not a prefill chunk or a recompute
	// Slot is Seq.Slot, copied while the scheduler has the sequence at
	// hand: the engine finds its own state for the entry without first
	// waiting on a load from the sequence.
	Slot int32
}

// Mode is how a preempted sequence gave up its blocks.
type Mode uint8

// Preemption modes.
const (
	Recompute Mode = iota // blocks freed; the sequence re-prefills prompt and output later
	Swap                  // blocks copied to CPU swap space and back later
)

func (m Mode) String() string {
	if m == Swap {
		return "swap"
	}
	return "recompute"
}

// Preemption records one sequence preempted while the plan was formed.
type Preemption struct {
	Seq    *Seq
	Mode   Mode
	Blocks int // blocks copied out (Swap) or freed (Recompute)
}

// Plan is one step: the work to run and the cache moves that precede it.
// The scheduler reuses one Plan; its slices are valid until the next Schedule.
type Plan struct {
	Entries       []Entry
	Preempted     []Preemption
	SwappedIn     []*Seq // sequences whose blocks are copied back before the step
	SwapOutBlocks int    // blocks copied GPU→CPU before the step
	SwapInBlocks  int    // blocks copied CPU→GPU before the step
	// Paused are the running sequences that could not grow and skip this
	// step holding their blocks (preemption pause); PauseStarts counts
	// those that were not paused in the step before.
	Paused        []*Seq
	PauseStarts   int
	PrefillTokens int // Σ tokens of prefill entries
	// TierLoads are the blocks prefix lookups loaded from each offload
	// tier (kvcache.tiers) before the step.
	TierLoads  [kvcache.MaxTiers]int
	DecodeSeqs int // number of decode entries
	// The decode entries' sums a step's price needs, added up as they are
	// planned so the engine does not read every entry again: DecodeContext
	// is Σ (Start + 1), the KV each decode attends over with its new token;
	// DecodeDrafts is Σ (Tokens − 1), the draft tokens verified, and
	// DraftContext Σ (Tokens − 1)·(Start + 1); MaxDrafts the most drafts
	// one entry verifies.
	DecodeContext, DecodeDrafts, DraftContext int64
	MaxDrafts                                 int
}

// reset empties the plan. The entries are not cleared: the sequences they
// point to outlive the plan (the engine's request slots), and clearing
// pointers costs write barriers while the collector runs.
func (p *Plan) reset() {
	p.Entries = p.Entries[:0]
	clear(p.Preempted)
	p.Preempted = p.Preempted[:0]
	clear(p.SwappedIn)
	p.SwappedIn = p.SwappedIn[:0]
	clear(p.Paused)
	p.Paused = p.Paused[:0]
	p.SwapOutBlocks, p.SwapInBlocks, p.PrefillTokens, p.DecodeSeqs, p.PauseStarts = 0, 0, 0, 0, 0
	p.DecodeContext, p.DecodeDrafts, p.DraftContext, p.MaxDrafts = 0, 0, 0, 0
}

// Empty reports whether the plan has no work.
func (p *Plan) Empty() bool { return len(p.Entries) == 0 }
