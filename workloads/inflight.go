package workloads

// InFlight caps the requests in flight of a source, as vLLM bench's
// --max-concurrency semaphore and GuideLLM's concurrent strategies do: a
// request due while the cap is reached is sent when one in flight ends
// ("sleep until the schedule says, then wait for a slot"), and its Arrival
// is when it was sent, from which the client measures its latencies. The
// source's order, lengths and seeds are kept: only the send times move.
// Its memory is one request.
type InFlight struct {
	src      Source
	limit    int
	inFlight int
	freedAt  int64 // when the latest end freed a slot of a full cap
	next     Request
	has      bool // next holds the source's next request
	done     bool // the source has no more
}

var _ Reactive = (*InFlight)(nil)

// NewInFlight caps src at limit (≥ 1) requests in flight.
func NewInFlight(src Source, limit int) *InFlight {
	return &InFlight{src: src, limit: max(limit, 1)}
}

// Source is the source capped.
func (c *InFlight) Source() Source { return c.src }

// peek holds the source's next request, if it has one.
func (c *InFlight) peek() bool {
	if !c.has && !c.done {
		if c.src.Next(&c.next) {
			c.has = true
		} else {
			c.done = true
		}
	}
	return c.has
}

// NextAt implements Reactive: the next send time, when a slot is free.
// Once a slot is free only that request can take it, so the time is final.
func (c *InFlight) NextAt() (int64, bool) {
	if c.inFlight >= c.limit || !c.peek() {
		return 0, false
	}
	return max(c.next.Arrival, c.freedAt), true
}

// Next implements Source.
func (c *InFlight) Next(r *Request) bool {
	at, ok := c.NextAt()
	if !ok {
		return false
	}
	*r = c.next
	r.Arrival = at
	c.has = false
	c.inFlight++
	return true
}

// Done implements Reactive.
func (c *InFlight) Done(_ int, at int64) {
	if c.inFlight >= c.limit {
		c.freedAt = at
	}
	c.inFlight = max(c.inFlight-1, 0)
}

// Exhausted implements Reactive.
func (c *InFlight) Exhausted() bool { return !c.peek() }

// Err passes the source's error on.
func (c *InFlight) Err() error { return Err(c.src) }

// Skipped passes on the malformed trace rows the source skipped.
func (c *InFlight) Skipped() int { return SkippedRows(c.src) }
