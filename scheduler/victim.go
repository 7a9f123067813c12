package scheduler

// Victim picks which sequence to preempt when the cache cannot grow.
// candidates are the running sequences not yet scheduled in this step, in
// the order they started; Pick returns an index into it.
type Victim interface {
	Pick(candidates []*Seq) int
}

// Victim rule names.
const (
	NewestName         = "newest"
	LowestPriorityName = "lowest-priority"
)

type newest struct{}

// Pick returns the sequence that entered the running set last, as vLLM's
// FCFS scheduler pops the tail of its running list.
func (newest) Pick(c []*Seq) int {
	best := 0
	for i, s := range c {
		if s.startOrder > c[best].startOrder {
			best = i
		}
	}
	return best
}

type lowestPriority struct{}

// Pick returns the sequence with the largest priority value (least
// important), the newest among equals, as vLLM's priority scheduler does.
func (lowestPriority) Pick(c []*Seq) int {
	best := 0
	for i, s := range c {
		b := c[best]
		if s.Priority > b.Priority || (s.Priority == b.Priority && s.startOrder > b.startOrder) {
			best = i
		}
	}
	return best
}

var (
	_ Victim = newest{}
	_ Victim = lowestPriority{}
)
