package sim

// ReducedAsync reports whether Run reduced ended streams on the
// finisher's goroutine (for TestFinisherIsTheSteppedRun).
func (e *Engine) ReducedAsync() bool { return e.finished }
