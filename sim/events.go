package sim

// eventClass orders simultaneous events: a step's tokens become visible
// before requests arriving at the same instant are queued, and those
// requests are queued before the next step is formed.
type eventClass uint8

const (
	evStepEnd eventClass = iota
	evArrival
	evStepStart
)

type event struct {
	at      Time
	class   eventClass
	replica int32
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

// eventQueue is a binary min-heap of events by (time, class, sequence).
// It holds a handful of events (the next arrival, one step per replica), so
// pushes and pops are cheap and allocate nothing once it has grown.
type eventQueue struct{ items []event }

func (q *eventQueue) Len() int { return len(q.items) }

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.items[i].before(&q.items[p]) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items = q.items[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&q.items[i]) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}
