package sim

// ReducedAsync reports whether Run reduced ended streams on the
// finisher's goroutine (for TestFinisherIsTheSteppedRun).
func (e *Engine) ReducedAsync() bool { return e.finished }

// PlainRun is the tokens wholeSteps' loop took, over the replicas.
func (e *Engine) PlainRun() (n int64) {
	for _, r := range e.reps {
		n += r.plainRun
	}
	return n
}

// ForgetSpares clears r's link to the Spares its series took histograms
// from, so r compares equal to the result of a run without one.
func ForgetSpares(r *Result) { r.Series.pool = nil }

// SpareRequests is the number of request slots sp holds.
func SpareRequests(sp *Spares) int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.reqs)
}
