package sim

import (
	"math/rand/v2"

	"github.com/itlsim/itlsim/workloads/seed"
)

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

// Stream returns the seed of the random stream named name within a run of
// seed seed: a SplitMix64 mix of the seed and the name's FNV-1a hash. Each
// subsystem draws from its own stream, so adding draws to one never shifts
// another's.
func Stream(s uint64, name string) uint64 {
	return seed.Mix(s ^ seed.Mix(seed.Hash(name)))
}

func newRand(s uint64, name string) *rand.Rand {
	x := Stream(s, name)
	return rand.New(rand.NewPCG(x, seed.Mix(x)))
}
