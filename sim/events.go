package sim

// eventClass orders simultaneous events: a step's tokens become visible
// before the engines' load snapshot is taken, the snapshot before requests
// arriving at the same instant are routed and queued, and those requests
// are queued before the next step is formed. A KV transfer that lands at
// the same instant as a step start joins that step's queue.
type eventClass uint8

const (
	evStepEnd eventClass = iota
	evSnapshot
	evArrival
	evTransferEnd // a disaggregated request's KV cache lands on its decode replica (disagg.go)
	evStepStart
)

type event struct {
	at      Time
	class   eventClass
	replica int32 // the replica a step or transfer event belongs to; -1 for arrivals and snapshots
	seq     uint64
}

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.class != b.class {
		return a.class < b.class
	}
	return a.seq < b.seq
}

// eventQueue holds the engine's events by (time, class, sequence). It
// holds a handful (the next arrival, one step per replica), so pushes and
// pops are cheap and allocate nothing once it has grown.
type eventQueue struct {
	heap minHeap[event, *event]
	seq  uint64 // the last event's sequence number
}

// push schedules an event of the class at at, for replica (-1 for none),
// after every event already queued for the same time and class.
func (q *eventQueue) push(at Time, class eventClass, replica int32) {
	q.seq++
	q.heap.push(event{at: at, class: class, replica: replica, seq: q.seq})
}

func (q *eventQueue) pop() event { return q.heap.pop() }

// Len is the number of events queued.
func (q *eventQueue) Len() int { return q.heap.Len() }

// minHeap is a binary min-heap of T ordered by P's before. It is the
// engine's one heap: the event queue and the failover watchdog's deadlines.
type minHeap[T any, P interface {
	*T
	before(*T) bool
}] struct{ items []T }

func (h *minHeap[T, P]) Len() int { return len(h.items) }

// peek returns the first item; the heap must not be empty.
func (h *minHeap[T, P]) peek() *T { return &h.items[0] }

func (h *minHeap[T, P]) push(x T) {
	h.items = append(h.items, x)
	s := h.items
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !P(&s[i]).before(&s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *minHeap[T, P]) pop() T {
	s := h.items
	top, n := s[0], len(s)-1
	s[0] = s[n]
	s = s[:n]
	h.items = s
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && P(&s[r]).before(&s[l]) {
			m = r
		}
		if !P(&s[m]).before(&s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return top
}
