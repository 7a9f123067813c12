package jitter

import (
	"math"
	"testing"
)

func TestNoVariationDrawsNothing(t *testing.T) {
	for _, c := range []Config{{}, {StepTimeScale: 1}, {HiccupRatePerS: 1}, {HiccupMS: 500}} {
		j := New(c, 7)
		if f, ok := j.Factor(); ok || f != 1 {
			t.Errorf("%+v: factor %g, %v; want 1, false", c, f, ok)
		}
		if h := j.Hiccup(1e12); h != 0 {
			t.Errorf("%+v: hiccup %d ns; want none", c, h)
		}
	}
	j := New(Config{StepTimeScale: 1.5}, 7)
	if f, ok := j.Factor(); !ok || f != 1.5 {
		t.Errorf("scale 1.5 alone: factor %g, %v; want exactly 1.5, true", f, ok)
	}
}

// The lognormal factor has mean 1 and the configured coefficient of
// variation, times the scale.
func TestFactorMoments(t *testing.T) {
	const n, cv, scale = 200000, 0.3, 2.0
	j := New(Config{NoiseCV: cv, StepTimeScale: scale}, 42)
	var s, s2 float64
	for range n {
		f, _ := j.Factor()
		s += f / scale
		s2 += (f / scale) * (f / scale)
	}
	mean := s / n
	sd := math.Sqrt(s2/n - mean*mean)
	if math.Abs(mean-1) > 0.005 || math.Abs(sd/mean-cv) > 0.01 {
		t.Errorf("factor/scale mean %.4f, cv %.4f; want 1 and %g", mean, sd/mean, cv)
	}
}

// Hiccups come at the first step start at or after each due time, never
// overlap, and their mean spacing is 1/rate plus the hiccup itself.
func TestHiccupsArePoissonAndNeverOverlap(t *testing.T) {
	const rate, ms = 2.0, 100.0
	j := New(Config{HiccupRatePerS: rate, HiccupMS: ms}, 3)
	const step = int64(1e6) // a step start every ms
	var n, last int64 = 0, -1
	var end int64 = 2000 * 1e9
	for now := int64(0); now < end; now += step {
		if h := j.Hiccup(now); h != 0 {
			if h != 100e6 {
				t.Fatalf("hiccup of %d ns, want 100 ms", h)
			}
			if last >= 0 && now < last+h {
				t.Fatalf("hiccup at %d ns inside the one at %d ns", now, last)
			}
			last = now
			n++
		}
	}
	want := float64(end) / 1e9 / (1/rate + ms/1000)
	if math.Abs(float64(n)/want-1) > 0.05 {
		t.Errorf("%d hiccups over %.0f s, want about %.0f", n, float64(end)/1e9, want)
	}
}

// The same seed gives the same draws; another seed different ones.
func TestSeeded(t *testing.T) {
	c := Config{NoiseCV: 0.2, HiccupRatePerS: 1, HiccupMS: 10}
	a, b, o := New(c, 1), New(c, 1), New(c, 2)
	fa, _ := a.Factor()
	fb, _ := b.Factor()
	fo, _ := o.Factor()
	if fa != fb || fa == fo {
		t.Errorf("factors %g, %g (same seed), %g (other); want the first two equal, the third not", fa, fb, fo)
	}
}

func TestHiccupSaturates(t *testing.T) {
	j := New(Config{HiccupRatePerS: 1e-9, HiccupMS: 1}, 5)
	j.next = 0
	if h := j.Hiccup(math.MaxInt64 - 10); h == 0 || j.next != math.MaxInt64 {
		t.Errorf("hiccup %d near the end of time, next %d; want one, then the next at the clock's end", h, j.next)
	}
}
