package sim

import (
	"cmp"
	"slices"

	"github.com/itlsim/itlsim/scheduler"
)

// Chunk is one visible update of a stream: Tokens tokens at At.
type Chunk struct {
	At     Time
	Tokens int
}

// Stall is one gap above the stall threshold: the gap ending at chunk
// Index (1-based: between chunks Index−1 and Index, 0-based) and its parts.
type Stall struct {
	Index int             // the chunk the gap ends at (≥ 1)
	Gap   Time            // the gap
	Parts [NumCauses]Time // its split by cause; sums to Gap
}

// Timeline is one request's outcome and, for a stream, its visible chunks
// and stalls. A TimelineSink receives it; its slices are only valid during
// the call.
type Timeline struct {
	ID           int
	Arrival      Time
	InputTokens  int
	OutputTokens int
	// Status is how the request ended, as the run's figures count it:
	// finished, failed (the client's connection dropped for good; its
	// chunks are those it saw; or Engine.Abort ended it, its chunks those
	// sent before, and Abort says why), cancelled (aborted on the server
	// by the failover watchdog) or rejected (no chunks; Reject says why).
	Status Status
	Reject scheduler.Reason
	Abort  string // why Engine.Abort ended it (serve: "cancelled", "write-timeout", "drain"); "" when it did not
	Chunks []Chunk
	Stalls []Stall
}

// TimelineSink receives every request's timeline, in the order requests
// end (finish, fail or are rejected), before the engine forgets it: with
// a delivery path, the client's view. The CLI writes them to a file; the
// engine keeps none of them.
type TimelineSink interface {
	Stream(t *Timeline)
}

// sinkNoChunks hands the sink a request that ended without a visible
// chunk: rejected (why), failed before its first chunk reached the
// client, or aborted before its first chunk (abort says why). It is called
// once per such request, never per token.
func (rc *recorder) sinkNoChunks(id int, arrival Time, prompt int, status Status, why scheduler.Reason, abort string) {
	rc.sink.Stream(&Timeline{ID: id, Arrival: arrival, InputTokens: prompt,
		Status: status, Reject: why, Abort: abort})
}

// SetTimelineSink makes the engine hand every finished stream's timeline to s.
func (e *Engine) SetTimelineSink(s TimelineSink) { e.rec.sink = s }

// WorstStream is one of the streams with the largest gaps, kept whole for
// reports (a timeline chart of the worst streams).
type WorstStream struct {
	ID          int
	Arrival     Time
	MaxGap      Time
	ChunkTimes  []Time // every chunk's time
	ChunkTokens []int  // tokens per chunk
	Stalls      []Stall
}

// worstLess orders worst streams: larger max gap first, then lower id.
func worstLess(a, b *WorstStream) int {
	if c := cmp.Compare(b.MaxGap, a.MaxGap); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// offerWorst keeps the k streams with the largest max gap, chosen exactly
// (every finished stream is offered). The slice stays sorted worst first.
func offerWorst(list []WorstStream, k int, t *Timeline, maxGap Time) []WorstStream {
	if k <= 0 {
		return list
	}
	cand := WorstStream{ID: t.ID, MaxGap: maxGap}
	if len(list) == k && worstLess(&cand, &list[k-1]) >= 0 {
		return list
	}
	w := WorstStream{ID: t.ID, Arrival: t.Arrival, MaxGap: maxGap,
		ChunkTimes: make([]Time, len(t.Chunks)), ChunkTokens: make([]int, len(t.Chunks))}
	if len(t.Stalls) > 0 {
		// A stream without stalls holds none (nil), whether the stalls it
		// came with were a reused empty buffer or a copy of one.
		w.Stalls = slices.Clone(t.Stalls)
	}
	for i, c := range t.Chunks {
		w.ChunkTimes[i], w.ChunkTokens[i] = c.At, c.Tokens
	}
	i, _ := slices.BinarySearchFunc(list, w, func(a, b WorstStream) int { return worstLess(&a, &b) })
	list = slices.Insert(list, i, w)
	if len(list) > k {
		list = list[:k]
	}
	return list
}

// mergeWorst merges two worst lists keeping k.
func mergeWorst(a, b []WorstStream, k int) []WorstStream {
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, func(x, y WorstStream) int { return worstLess(&x, &y) })
	if len(out) > k {
		out = out[:k]
	}
	return out
}
