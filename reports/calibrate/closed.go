package calibrate

import "github.com/itlsim/itlsim/workloads"

// gated offers requests at their scheduled arrivals but never more than
// limit in flight: a request due while the limit is reached is sent when
// one in flight ends ("sleep, then wait for a slot", as vLLM bench's
// --max-concurrency and GuideLLM's concurrent strategies send them).
type gated struct {
	reqs     []workloads.Request // Arrival: the schedule
	next     int
	inFlight int
	limit    int
	freedAt  int64 // when the latest end freed a slot of a full pipe
}

var _ workloads.Reactive = (*gated)(nil)

func (g *gated) NextAt() (int64, bool) {
	if g.next >= len(g.reqs) || g.inFlight >= g.limit {
		return 0, false
	}
	return max(g.reqs[g.next].Arrival, g.freedAt), true
}

func (g *gated) Next(r *workloads.Request) bool {
	at, ok := g.NextAt()
	if !ok {
		return false
	}
	*r = g.reqs[g.next]
	r.Arrival = at
	g.next++
	g.inFlight++
	return true
}

func (g *gated) Done(_ int, at int64) {
	if g.inFlight >= g.limit {
		g.freedAt = at
	}
	g.inFlight--
}

func (g *gated) Exhausted() bool { return g.next >= len(g.reqs) }
