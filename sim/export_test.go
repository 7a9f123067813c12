package sim

// ReducedAsync reports whether Run reduced ended streams on the
// finisher's goroutine (for TestFinisherIsTheSteppedRun).
func (e *Engine) ReducedAsync() bool { return e.finished }

// SetPlainLoop turns endPlain's loop for the whole-step token on or off
// and returns a func that restores it (for TestPlainLoopIsGeneral).
func SetPlainLoop(on bool) (restore func()) {
	was := plainLoop
	plainLoop = on
	return func() { plainLoop = was }
}

// PlainRun is the tokens endPlain's loop took, over the replicas.
func (e *Engine) PlainRun() (n int64) {
	for _, r := range e.reps {
		n += r.plainRun
	}
	return n
}

// ForgetSpares clears r's link to the Spares its series took histograms
// from, so r compares equal to the result of a run without one.
func ForgetSpares(r *Result) { r.Series.pool = nil }
