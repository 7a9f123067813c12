package scheduler

// Order orders the waiting queue: Less reports whether a starts before b.
type Order interface {
	Less(a, b *Seq) bool
}

// Queue order names.
const (
	FCFSName     = "fcfs"
	PriorityName = "priority"
	SPFName      = "shortest-prompt-first"
)

type fcfs struct{}

func (fcfs) Less(a, b *Seq) bool {
	if a.Arrival != b.Arrival {
		return a.Arrival < b.Arrival
	}
	return a.ID < b.ID
}

type priority struct{}

func (priority) Less(a, b *Seq) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return fcfs{}.Less(a, b)
}

type shortestPromptFirst struct{}

func (shortestPromptFirst) Less(a, b *Seq) bool {
	if a.Prompt != b.Prompt {
		return a.Prompt < b.Prompt
	}
	return fcfs{}.Less(a, b)
}

var (
	_ Order = fcfs{}
	_ Order = priority{}
	_ Order = shortestPromptFirst{}
)

// queue is a binary heap of waiting sequences under an Order. Push and Pop
// are O(log n) and allocate only when the backing slice grows.
type queue struct {
	order Order
	items []*Seq
}

func (q *queue) Len() int { return len(q.items) }

func (q *queue) Peek() *Seq {
	if len(q.items) == 0 {
		return nil
	}
	return q.items[0]
}

func (q *queue) Push(s *Seq) {
	s.heapIdx = len(q.items)
	q.items = append(q.items, s)
	q.up(s.heapIdx)
}

func (q *queue) Pop() *Seq {
	n := len(q.items) - 1
	top := q.items[0]
	q.swap(0, n)
	q.items[n] = nil
	q.items = q.items[:n]
	if n > 0 {
		q.down(0)
	}
	top.heapIdx = -1
	return top
}

// remove takes s, which must be queued, out of the queue.
func (q *queue) remove(s *Seq) {
	i, n := s.heapIdx, len(q.items)-1
	if i < 0 || i > n || q.items[i] != s {
		panic("scheduler: removing a sequence that is not queued")
	}
	q.swap(i, n)
	q.items[n] = nil
	q.items = q.items[:n]
	if i < n {
		q.down(i)
		q.up(i)
	}
	s.heapIdx = -1
}

func (q *queue) swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.items[i].heapIdx = i
	q.items[j].heapIdx = j
}

func (q *queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.order.Less(q.items[i], q.items[p]) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *queue) down(i int) {
	n := len(q.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.order.Less(q.items[r], q.items[l]) {
			m = r
		}
		if !q.order.Less(q.items[m], q.items[i]) {
			return
		}
		q.swap(i, m)
		i = m
	}
}
