package workloads

// Queue is a Reactive source whose requests its owner pushes as they come:
// itlsim serve pushes each request that arrives over the network, at its
// arrival time, then wakes the engine. It never runs dry for good (a server
// waits for the next client), so Exhausted is false until Close.
//
// Like every Source it has one consumer and is not safe for concurrent use:
// the goroutine that owns the engine pushes too.
type Queue struct {
	reqs   []Request // pending, in arrival order; reqs[head:] are due or future
	head   int
	closed bool
}

var _ Reactive = (*Queue)(nil)

// Push adds r. Its Arrival must not precede the last pushed request's.
func (q *Queue) Push(r Request) {
	if q.head > 0 && q.head == len(q.reqs) { // drained: reuse the buffer
		q.reqs, q.head = q.reqs[:0], 0
	}
	q.reqs = append(q.reqs, r)
}

// Len is the number of pushed requests not yet taken.
func (q *Queue) Len() int { return len(q.reqs) - q.head }

// NextAt implements Reactive.
func (q *Queue) NextAt() (int64, bool) {
	if q.head == len(q.reqs) {
		return 0, false
	}
	return q.reqs[q.head].Arrival, true
}

// Next implements Source.
func (q *Queue) Next(r *Request) bool {
	if q.head == len(q.reqs) {
		return false
	}
	*r = q.reqs[q.head]
	q.reqs[q.head] = Request{}
	q.head++
	return true
}

// Done implements Reactive; ends do not change a queue's arrivals.
func (q *Queue) Done(id int, at int64) {}

// Close marks the queue as receiving no more requests.
func (q *Queue) Close() { q.closed = true }

// Exhausted implements Reactive: closed and drained.
func (q *Queue) Exhausted() bool { return q.closed && q.head == len(q.reqs) }
