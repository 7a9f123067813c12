package workloads

import (
	"container/heap"

	"github.com/itlsim/itlsim/workloads/seed"
)

// ArrivalClosed is the closed-loop arrival process: Users concurrent users,
// each sending its next request a think time (exponential, mean ThinkS)
// after its previous one ended. The offered load then follows the server:
// a slow server slows the arrivals, as a fixed pool of real users would.
const ArrivalClosed = "closed"

// Reactive is a Source whose arrivals depend on when requests end. The
// engine tells it every ended request (Done) and asks when the next
// request is due (NextAt) instead of taking Next's false as the end.
type Reactive interface {
	Source
	// NextAt is the arrival time (ns) of the next request, if one is due.
	NextAt() (int64, bool)
	// Done reports that request id ended (finished or rejected) at time at.
	Done(id int, at int64)
	// Exhausted reports that no request will ever be due again.
	Exhausted() bool
}

type userAt struct {
	at   int64
	user int32
}

type userHeap []userAt

func (h userHeap) Len() int { return len(h) }
func (h userHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].user < h[j].user
}
func (h userHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *userHeap) Push(x any)   { *h = append(*h, x.(userAt)) }
func (h *userHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// closedLoop is the closed-loop Source. Its memory grows with the users,
// not with the requests sent.
type closedLoop struct {
	g       *generator
	thinkNs float64
	seed    uint64 // the workload's seed
	ready   userHeap
	active  map[int]int32 // request id → user, while the request is in flight
	limit   int           // requests to send; 0: bounded by horizon
	horizon float64       // ns
	issued  int
}

var _ Reactive = (*closedLoop)(nil)

func newClosedLoop(c Config, workloadSeed uint64, g *generator) *closedLoop {
	l := &closedLoop{g: g, thinkNs: c.ThinkS * 1e9, seed: workloadSeed,
		active: map[int]int32{}, limit: c.Requests, horizon: c.DurationS * 1e9}
	for u := range c.Users {
		// Users start staggered by one think time each, as if mid-session.
		heap.Push(&l.ready, userAt{at: int64(l.think(seed.Derive(l.seed, "user", u))), user: int32(u)})
	}
	return l
}

// think draws a think time from the stream "think" under parent: a user's
// seed for its first, the ended request's seed for each later one, so a
// request's think time is the same whichever policy served it and
// whenever it ended.
func (l *closedLoop) think(parent uint64) float64 {
	if l.thinkNs <= 0 {
		return 0
	}
	r := seed.Stream(parent, "think")
	return r.ExpFloat64() * l.thinkNs
}

func (l *closedLoop) full() bool { return l.limit > 0 && l.issued >= l.limit }

// NextAt implements Reactive.
func (l *closedLoop) NextAt() (int64, bool) {
	if l.full() || len(l.ready) == 0 {
		return 0, false
	}
	at := l.ready[0].at
	if l.limit == 0 && float64(at) >= l.horizon {
		return 0, false
	}
	return at, true
}

// Next implements Source: the next due request.
func (l *closedLoop) Next(r *Request) bool {
	if _, ok := l.NextAt(); !ok {
		return false
	}
	u := heap.Pop(&l.ready).(userAt)
	*r = l.g.request(l.issued, float64(u.at))
	l.active[l.issued] = u.user
	l.issued++
	return true
}

// Done implements Reactive.
func (l *closedLoop) Done(id int, at int64) {
	u, ok := l.active[id]
	if !ok {
		return
	}
	delete(l.active, id)
	heap.Push(&l.ready, userAt{at: at + int64(l.think(RequestSeed(l.seed, id))), user: u})
}

// Exhausted implements Reactive.
func (l *closedLoop) Exhausted() bool {
	_, due := l.NextAt()
	return !due && (l.full() || len(l.active) == 0)
}
