package qoe

import (
	"math"
	"math/rand/v2"
	"testing"
)

// engineLike is a stream as the engine reports one: whole nanoseconds, the
// first chunk 20–200 ms after the request, then gaps of 5–50 ms in runs of
// equal gaps (a shared step's time) of one, a few or hundreds, with a
// stall of 0.2–3 s now and then.
func engineLike(rng *rand.Rand, n int) []float64 {
	at := make([]float64, n)
	tm := int64(2e7 + rng.Float64()*1.8e8)
	gap, left := int64(0), 0
	for k := range at {
		if k > 0 {
			if left == 0 {
				gap = int64(5e6 + rng.Float64()*4.5e7)
				switch rng.IntN(3) {
				case 0:
					left = 1
				case 1:
					left = 2 + rng.IntN(5)
				default:
					left = 50 + rng.IntN(450)
				}
			}
			left--
			tm += gap
			if rng.IntN(60) == 0 {
				tm += int64(2e8 + rng.Float64()*2.8e9)
			}
		}
		at[k] = float64(tm)
	}
	return at
}

// shapes are the streams the differential tests draw: engine-like ones,
// randomStream's (fractional ms), constant gaps, and a few odd ones.
func shapes(rng *rand.Rand, trial int) []float64 {
	n := 1 + rng.IntN(600)
	switch trial % 5 {
	case 0, 1:
		return engineLike(rng, n)
	case 2:
		at, _ := randomStream(rng, n)
		return at
	case 3: // one gap throughout
		at := make([]float64, n)
		g := float64(int64(1e6 + rng.Float64()*5e7))
		for k := range at {
			at[k] = 1e8 + float64(k)*g
		}
		return at
	default: // unsorted, repeated and huge times
		at := engineLike(rng, n)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(n)
			switch rng.IntN(3) {
			case 0:
				at[i] = at[max(0, i-1)]
			case 1:
				at[i] -= 1e8
			default:
				at[i] += 1e12
			}
		}
		return at
	}
}

// periodFor is a period to score at: mostly near the stream's own gaps
// (where the slack matters and rounding decides), sometimes far off.
func periodFor(rng *rand.Rand, at []float64) float64 {
	if len(at) >= 2 && rng.IntN(3) > 0 {
		k := 1 + rng.IntN(len(at)-1)
		g := at[k] - at[k-1]
		if g > 0 {
			return g * (0.9 + rng.Float64()*0.3)
		}
	}
	return 1e9 / (0.5 + rng.Float64()*200)
}

// TestCoveredPassIsThePass: the one-token pass that counts the deadlines
// after its slack covers every later interval's excess as met without
// reading them gives the result of reading every chunk, bit for bit, and
// the same as fluidity's general pass, over random streams (long runs of
// equal gaps, short runs, single gaps, stalls, unsorted and repeated
// times), periods near and far from the gaps, deadlines for the first
// token from 0 to 2 s, and budgets; and the shortcut is taken often
// enough to be tested.
func TestCoveredPassIsThePass(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	short := 0
	const trials = 20000
	for trial := range trials {
		at := shapes(rng, trial)
		ones := make([]int, len(at))
		for k := range ones {
			ones[k] = 1
		}
		period := periodFor(rng, at)
		ttft := rng.Float64() * 2e9
		budget := math.Inf(1)
		if trial%2 == 0 {
			budget = float64(rng.IntN(len(at)+1)) * rng.Float64()
		}
		var x excess
		x.fill(at)
		got, read := fluidityOnesCovered(ttft, period, at, budget, x.cover(period))
		full, _ := fluidityOnesCovered(ttft, period, at, budget, math.Inf(1))
		want := fluidity(ttft, period, at, ones, budget)
		if got != want || full != want || fluidityOnes(ttft, period, at, budget) != want {
			t.Fatalf("trial %d (%d chunks, period %v, ttft %v, budget %v): %v, read in full %v, general %v",
				trial, len(at), period, ttft, budget, got, full, want)
		}
		if read < len(at)-1 {
			short++
		}
	}
	if short < trials/5 {
		t.Errorf("the shortcut was taken in %d of %d passes: hardly tested", short, trials)
	}
}

// TestFluidRateCoveredIsGeneral: the fluid token rate and the score with
// the covered one-token pass are those of fluidity's general pass run in
// full at every probe, bit for bit, over the same random streams.
func TestFluidRateCoveredIsGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for trial := range 6000 {
		at := shapes(rng, trial)
		ones := make([]int, len(at))
		for k := range ones {
			ones[k] = 1
		}
		ttft := rng.Float64() * 2e9
		if got, want := FluidRate(ttft, at, ones), fluidRate(ttft, at, ones, false, true, nil); got != want {
			t.Fatalf("trial %d (%d chunks, ttft %v): %v, want %v", trial, len(at), ttft, got, want)
		}
		e := Expectation{TTFT: ttft, TokensPerS: 0.5 + rng.Float64()*100}
		s, _ := Score(e, at, ones)
		if want := Fluidity(e.TTFT, 1e9/e.TokensPerS, at, ones); s.Fluidity != want {
			t.Fatalf("trial %d: fluidity %v, want %v", trial, s.Fluidity, want)
		}
	}
}

// TestExcessBoundsTheExcess: cover(p) is at least the intervals' summed
// excess over p, for random streams and periods.
func TestExcessBoundsTheExcess(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for trial := range 4000 {
		at := shapes(rng, trial)
		var x excess
		x.fill(at)
		p := periodFor(rng, at)
		var w float64
		for k := 1; k < len(at); k++ {
			w += max(0, at[k]-at[k-1]-p)
		}
		if c := x.cover(p); !(c >= w) {
			t.Fatalf("trial %d: cover %v below the excess %v at period %v", trial, c, w, p)
		}
	}
}
