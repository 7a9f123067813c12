package sim

// ReducesAsync reports whether Run reduces ended streams on the finisher's
// goroutine (for TestFinisherIsTheSteppedRun).
func (e *Engine) ReducesAsync() bool { return e.async() }
