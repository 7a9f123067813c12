package workloads

// Slice is a Source over requests held in memory, for replaying a recorded
// or hand-built request list. Requests must be in non-decreasing arrival
// order; Next hands them out in turn.
type Slice struct {
	Requests []Request
	next     int
}

// Next fills r with the next request and reports whether there was one.
func (s *Slice) Next(r *Request) bool {
	if s.next >= len(s.Requests) {
		return false
	}
	*r = s.Requests[s.next]
	s.next++
	return true
}

var _ Source = (*Slice)(nil)
