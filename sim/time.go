package sim

// Time is simulated time in integer nanoseconds since the start of a run.
type Time int64

// Common durations.
const (
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Seconds converts t to float seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// MS converts t to float milliseconds.
func (t Time) MS() float64 { return float64(t) / 1e6 }

// FromMS converts float milliseconds to Time, rounding to the nanosecond.
func FromMS(ms float64) Time { return Time(ms*1e6 + 0.5) }
