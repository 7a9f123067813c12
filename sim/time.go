package sim

import "math"

// Time is simulated time in integer nanoseconds since the start of a run.
type Time int64

// Common durations.
const (
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// MaxTime is the latest simulated time. The clock saturates there: a
// cost model that prices steps at centuries (a compute efficiency of
// 1e-12) ends its run at MaxTime instead of wrapping int64 around.
const MaxTime = Time(math.MaxInt64)

// Horizon is the latest time a step may end: about 73 years. A run whose
// cost model prices steps past it (a compute efficiency of 1e-12) stops
// there with Engine.Err, instead of wrapping int64 time around.
const Horizon = MaxTime / 4

// Add returns t+d, saturated at MaxTime (t and d are not negative).
func (t Time) Add(d Time) Time {
	if s := t + d; s >= t {
		return s
	}
	return MaxTime
}

// Seconds converts t to float seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// MS converts t to float milliseconds.
func (t Time) MS() float64 { return float64(t) / 1e6 }

// FromMS converts float milliseconds to Time, rounding to the nanosecond.
func FromMS(ms float64) Time { return Time(ms*1e6 + 0.5) }
