package delivery

// Cause is one reason a client waited between two visible chunks. Every
// client gap is split among causes so that its parts sum exactly to the gap
// (see [Result.Parts] and the package documentation for the rule).
type Cause uint8

// Causes, in report order. CauseServer is the part the server's own output
// explains; the engine splits it further by its own causes.
const (
	// CauseServer is the server-side interval between the server chunks
	// that ended the two client chunks: the time the primary replica took
	// to produce the tokens, up to a failover's watchdog.
	CauseServer Cause = iota
	// CauseNetwork is the change in transport delay: one-way latency and
	// its jitter, head-of-line blocking behind a jittered chunk, coalescing
	// in a proxy or TCP buffer (Nagle), and the renderer's frame
	// quantization.
	CauseNetwork
	// CausePacketLoss is retransmission timeouts of lost chunks and the
	// head-of-line blocking they impose on every later chunk.
	CausePacketLoss
	// CauseConnection is waiting for a dropped connection to be
	// re-established and the stream resumed.
	CauseConnection
	// CauseSmoothingDelay is time tokens are held on purpose: the server's
	// accept-then-flush window and the client smoothing buffer.
	CauseSmoothingDelay
	// CauseFailover is time from a failover's watchdog to the backup's
	// tokens: the backup's TTFT overhead, its prefill of prompt plus the text
	// generated so far, and its decode steps for the rest of the stream.
	CauseFailover
	// NumCauses sizes per-cause arrays.
	NumCauses
)

var causeNames = [NumCauses]string{"server", "network", "packet-loss", "connection", "smoothing-delay", "failover"}

// String returns the cause's name as reports print it.
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
