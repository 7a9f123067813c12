package sim

import (
	"cmp"
	"fmt"
	"slices"
)

// Cause is one reason a stream waited between two visible chunks. Every gap
// is split among causes so that its parts sum exactly to the gap.
type Cause uint8

// Causes. Add new ones before NumCauses; reports list them in this order.
const (
	// CauseDecode is the time a plain decode step would have taken: the
	// stream was in the batch and the step held no prefill work.
	CauseDecode Cause = iota
	// CausePrefillInterference is time added by prefill work: the part of a
	// mixed step beyond what its decodes alone would cost, or a whole step
	// from which the stream's decode was left out because prompts ran
	// (prefill-first's prefill-only steps).
	CausePrefillInterference
	// CauseBatchFull is a step from which the stream's decode was left out
	// for lack of token budget while no prefill ran.
	CauseBatchFull
	// CauseKVSwap is time swapped out (from the step that preempted the
	// stream until the step that swapped it back in, copies included) plus
	// swap copies that lengthened a step the stream was in.
	CauseKVSwap
	// CauseKVRecompute is time from an eviction until the stream's next
	// token: waiting to restart and re-prefilling prompt and output.
	CauseKVRecompute
	// CauseEngineHiccup is a rare engine pause injected by the cost model's
	// hiccup settings (garbage collection, a slow host, a stuck collective).
	CauseEngineHiccup
	// CauseSpecRejection is speculative work whose tokens were rejected:
	// the draft and verify time a step spent beyond a plain decode step,
	// times the share of the stream's drafts the target rejected (for a
	// stream in the step that did not speculate, the step's overall
	// rejected share). The accepted share counts as decode.
	CauseSpecRejection
	// CauseNetwork is time the delivery path added between server and
	// client: latency and jitter, coalescing buffers, frame quantization,
	// the server's flush window (package sim/delivery; client view only).
	CauseNetwork
	// CausePacketLoss is waiting for a retransmission, and the head-of-line
	// blocking behind it.
	CausePacketLoss
	// CauseConnection is time without a connection: a drop and the reconnect.
	CauseConnection
	// CauseSmoothingDelay is time a client smoothing buffer held tokens back.
	CauseSmoothingDelay
	// CauseFailover is the backup's time to first token after a mid-stream
	// failover.
	CauseFailover
	// CauseKVPause is time a running stream skipped steps holding its KV
	// blocks because they could not grow (scheduler.preemption: pause).
	CauseKVPause
	// CauseKVTransfer is a disaggregated request's handoff on its decode
	// replica: from its KV cache landing (its first token streamed) until
	// the step that starts its decoding, waiting for the replica's current
	// step, a batch slot or room for its blocks. The transfer itself comes
	// before the first token and is in TTFT.
	CauseKVTransfer
	// NumCauses sizes per-cause arrays.
	NumCauses
)

var causeNames = [NumCauses]string{"decode", "prefill-interference", "batch-full", "kv-swap", "kv-recompute", "engine-hiccup", "spec-rejection",
	"network", "packet-loss", "connection", "smoothing-delay", "failover", "kv-pause", "kv-transfer"}

func (c Cause) String() string {
	if c < NumCauses {
		return causeNames[c]
	}
	return "unknown"
}

// Causes lists every cause in report order.
func Causes() []Cause {
	cs := make([]Cause, NumCauses)
	for i := range cs {
		cs[i] = Cause(i)
	}
	return cs
}

// parts is a gap's split by cause, in nanoseconds.
type parts [NumCauses]Time

func (p *parts) add(q *parts) {
	for i := range p {
		p[i] += q[i]
	}
}

func (p *parts) sum() Time {
	var s Time
	for _, v := range p {
		s += v
	}
	return s
}

// shares is a gap's split by cause in 1/65535ths of the gap: a compact
// record the delivery path's attribution splits a client gap's server
// share by (the split then restores an exact sum).
type shares [NumCauses]uint16

// The causes of a server gap, as the client view keeps them: one uint16
// per gap in request.gapCause. Almost every gap is a decode step, whole or
// stretched by prefill work, so the value is the prefill-interference share
// of a gap made of those two causes alone, in 1/prefillScale of the gap;
// mixedCause marks any other gap, whose split is in request.gapMixed. Two
// bytes per token and no loop over the causes keep this cheap on the hot
// path.
const (
	prefillScale = 0xFFFE
	mixedCause   = 0xFFFF
)

// mixedGap is the split of a server gap with a cause other than decode and
// prefill interference.
type mixedGap struct {
	index int32 // the gap's index in request.gaps
	s     shares
}

// noteGapCauses records the causes of the gap just closed, from its split
// p (whose parts sum to gap, as chunk has checked), for the client view.
func (q *request) noteGapCauses(gap Time, p *parts) {
	d, pf := p[CauseDecode], p[CausePrefillInterference]
	if d+pf == gap && d >= 0 && pf >= 0 {
		var v uint16
		if pf > 0 {
			v = uint16(float64(pf)*prefillScale/float64(gap) + 0.5)
		}
		q.gapCause = append(q.gapCause, v)
		return
	}
	q.gapCause = append(q.gapCause, mixedCause)
	q.gapMixed = slices.Grow(q.gapMixed, 1)
	q.gapMixed = q.gapMixed[:len(q.gapMixed)+1]
	m := &q.gapMixed[len(q.gapMixed)-1] // filled in place: no copy through the stack
	m.index = int32(len(q.gapCause) - 1)
	for c, v := range p {
		m.s[c] = 0
		if v > 0 {
			m.s[c] = uint16(float64(v)*65535/float64(gap) + 0.5)
		}
	}
}

// gapShares returns server gap i's split by cause (in any unit: the caller
// splits in proportion).
func (q *request) gapShares(i int) shares {
	var s shares
	if v := q.gapCause[i]; v != mixedCause {
		s[CauseDecode], s[CausePrefillInterference] = prefillScale-v, v
		return s
	}
	m, ok := slices.BinarySearchFunc(q.gapMixed, int32(i), func(g mixedGap, i int32) int { return cmp.Compare(g.index, i) })
	if !ok {
		panic(fmt.Sprintf("sim: request %d: gap %d is marked mixed but has no split", q.seq.ID, i))
	}
	return q.gapMixed[m].s
}
