package jitter

import (
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// Config is the variation a replica's steps get; the zero value has none.
type Config struct {
	NoiseCV        float64 // the per-step factor's coefficient of variation; 0 off
	HiccupRatePerS float64 // hiccups per second of simulated time; 0 off
	HiccupMS       float64 // a hiccup's length in milliseconds; 0 off
	StepTimeScale  float64 // every step time's multiplier; 0 or 1 unscaled
}

// Jitter is one replica's step-time variation as the run goes.
type Jitter struct {
	noise     *seed.Rand // nil without noise
	mu, sigma float64    // the lognormal's parameters (mean 1)
	scale     float64    // 1 unscaled
	hiccups   *seed.Rand // nil without hiccups
	rate      float64    // hiccups per second
	hiccupNS  int64      // a hiccup's length
	next      int64      // the next hiccup's earliest time, ns
}

// New is the variation c configures for the replica whose seed is rs
// (seed.Derive(runSeed, "replica", index)).
func New(c Config, rs uint64) Jitter {
	j := Jitter{scale: 1}
	if k := c.StepTimeScale; k > 0 {
		j.scale = k
	}
	if cv := c.NoiseCV; cv > 0 {
		noise := seed.Stream(rs, "step-noise")
		j.noise = &noise
		j.sigma = math.Sqrt(math.Log1p(cv * cv))
		j.mu = -j.sigma * j.sigma / 2
	}
	if c.HiccupRatePerS > 0 && c.HiccupMS > 0 {
		hiccups := seed.Stream(rs, "hiccups")
		j.hiccups = &hiccups
		j.rate = c.HiccupRatePerS
		j.hiccupNS = int64(c.HiccupMS*1e6 + 0.5)
		j.next = j.gap()
	}
	return j
}

// Factor draws the next step's time multiplier; false when every step
// takes its priced time (no noise, no scale), and nothing is drawn.
func (j *Jitter) Factor() (float64, bool) {
	if j.noise == nil && j.scale == 1 {
		return 1, false
	}
	f := j.scale
	if j.noise != nil {
		f *= math.Exp(j.mu + j.sigma*j.noise.NormFloat64())
	}
	return f, true
}

// Hiccup is the hiccup, in ns, a step starting at now (ns) runs into: none
// before the next one is due, else its length, and the one after it is
// drawn from the end of this one.
func (j *Jitter) Hiccup(now int64) int64 {
	if j.hiccups == nil || now < j.next {
		return 0
	}
	j.next = add(add(now, j.hiccupNS), j.gap())
	return j.hiccupNS
}

// gap draws the time from one hiccup to the next, in ns.
func (j *Jitter) gap() int64 {
	return int64(j.hiccups.ExpFloat64() / j.rate * 1e9)
}

// add is a+b saturated at the largest int64 (a and b are not negative), as
// the engine's clock saturates.
func add(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}
