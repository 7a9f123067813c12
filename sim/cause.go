package sim

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
	// NumCauses sizes per-cause arrays.
	NumCauses
)

var causeNames = [NumCauses]string{"decode", "prefill-interference", "batch-full", "kv-swap", "kv-recompute", "engine-hiccup", "spec-rejection",
	"network", "packet-loss", "connection", "smoothing-delay", "failover"}

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

func sharesOf(p *parts, gap Time) shares {
	var s shares
	if gap <= 0 {
		return s
	}
	// Most gaps have a single cause (a plain decode step): no division.
	only, n := 0, 0
	for c, v := range p {
		if v > 0 {
			only, n = c, n+1
		}
	}
	if n == 1 {
		s[only] = 65535
		return s
	}
	for c, v := range p {
		if v > 0 {
			s[c] = uint16(float64(v)*65535/float64(gap) + 0.5)
		}
	}
	return s
}
