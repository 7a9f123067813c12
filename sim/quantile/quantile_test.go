package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLinearMatchesNumpy(t *testing.T) {
	// Expected values computed with numpy.percentile(x, q*100) (method="linear").
	x := []float64{1, 2, 3, 4, 10}
	cases := []struct {
		q, want float64
	}{
		{0, 1}, {0.5, 3}, {0.9, 7.6}, {0.99, 9.76}, {1, 10}, {0.25, 2},
	}
	for _, c := range cases {
		if got := Linear(x, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Linear(%v, %v) = %v, want %v", x, c.q, got, c.want)
		}
	}
	if got := Linear([]float64{5}, 0.99); got != 5 {
		t.Errorf("single sample: got %v, want 5", got)
	}
	if got := Linear[float64](nil, 0.5); !math.IsNaN(got) {
		t.Errorf("empty: got %v, want NaN", got)
	}
	if got := Linear([]int64{1, 2, 3, 4, 10}, 0.9); math.Abs(got-7.6) > 1e-12 {
		t.Errorf("Linear p90 = %v, want 7.6", got)
	}
}

func TestHistogramExactBelowResolution(t *testing.T) {
	h := NewHistogram(10)
	var xs []int64
	for v := int64(0); v < 1000; v += 7 {
		h.Record(v)
		xs = append(xs, v)
	}
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
		if got, want := h.Quantile(q), Linear(xs, q); got != want {
			t.Errorf("q=%v: got %v, want %v", q, got, want)
		}
	}
}

func TestHistogramRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, bits := range []uint{4, 7, 10} {
		h := NewHistogram(bits)
		xs := make([]int64, 0, 50000)
		for range 50000 {
			v := int64(math.Exp(rng.NormFloat64()*1.5 + 16)) // ~ 9 ms median, heavy tail
			h.Record(v)
			xs = append(xs, v)
		}
		slices.Sort(xs)
		tol := math.Ldexp(1, -int(bits))
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
			got, want := h.Quantile(q), Linear(xs, q)
			if rel := math.Abs(got/want - 1); rel > tol {
				t.Errorf("bits=%d q=%v: got %v, want %v (rel err %.4g > %.4g)", bits, q, got, want, rel, tol)
			}
		}
		if h.Min != xs[0] || h.Max != xs[len(xs)-1] {
			t.Errorf("bits=%d: min/max %d/%d, want %d/%d", bits, h.Min, h.Max, xs[0], xs[len(xs)-1])
		}
	}
}

func TestHistogramMergeEqualsCombined(t *testing.T) {
	a, b, all := NewHistogram(8), NewHistogram(8), NewHistogram(8)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 10000 {
		v := rng.Int64N(1 << 30)
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(b)
	if !slices.Equal(a.Counts(), all.Counts()) || a.N != all.N || a.Min != all.Min || a.Max != all.Max {
		t.Fatalf("merged histogram differs from the combined one")
	}
	if a.Quantile(0.99) != all.Quantile(0.99) {
		t.Errorf("p99 after merge %v, want %v", a.Quantile(0.99), all.Quantile(0.99))
	}
}

func TestHistogramBucketsCoverRange(t *testing.T) {
	h := NewHistogram(5)
	prevLo := int64(-1)
	for i := range h.buckets() {
		lo, w := h.bounds(i)
		if lo <= prevLo || w < 1 {
			t.Fatalf("bucket %d: lower %d width %d after lower %d", i, lo, w, prevLo)
		}
		if got := h.bucketOf(lo); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", lo, got, i)
		}
		if got := h.bucketOf(lo + w - 1); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", lo+w-1, got, i)
		}
		prevLo = lo
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	h := NewHistogram(10)
	v := int64(12345)
	if n := testing.AllocsPerRun(1000, func() { h.Record(v); v += 977 }); n != 0 {
		t.Errorf("Record allocates %v times per call", n)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := NewHistogram(10)
	v := int64(1)
	for b.Loop() {
		h.Record(v)
		v = v*31 + 7&(1<<34-1)
	}
}

func TestStreamStatsMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		n := 1 + rng.IntN(600)
		xs := make([]int64, n)
		for i := range xs {
			switch trial % 3 {
			case 0:
				xs[i] = rng.Int64N(1e9)
			case 1:
				xs[i] = rng.Int64N(5) // many ties
			default:
				xs[i] = int64(i) // sorted already
			}
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		p50, p90, p99, mx := StreamStats(xs)
		if p50 != Linear(sorted, 0.5) || p90 != Linear(sorted, 0.9) || p99 != Linear(sorted, 0.99) || mx != sorted[n-1] {
			t.Fatalf("n=%d: got %v %v %v %v, want %v %v %v %v", n, p50, p90, p99, mx,
				Linear(sorted, 0.5), Linear(sorted, 0.9), Linear(sorted, 0.99), sorted[n-1])
		}
	}
}

// BenchmarkStreamStats summarizes streams of 256 gaps shaped like a
// decode stream's: step times drifting around 15 ms with a few stalls.
// Each iteration takes another of 512 streams, so the branch predictor
// cannot learn one stream's comparisons.
func BenchmarkStreamStats(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	srcs := make([][]int64, 512)
	for k := range srcs {
		src := make([]int64, 256)
		for i := range src {
			src[i] = 15e6 + rng.Int64N(3e6)
			if rng.IntN(50) == 0 {
				src[i] += 2e8
			}
		}
		srcs[k] = src
	}
	xs := make([]int64, 256)
	k := 0
	for b.Loop() {
		copy(xs, srcs[k%len(srcs)])
		StreamStats(xs)
		k++
	}
}

// A histogram emptied by Reset is a new one: Reset and Merge visit only the
// groups between the extremes, so every count outside them must be zero
// already, for eager (6-bit) and lazy histograms, samples from 0 to past
// 2^maxExp.
func TestResetIsANewHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []uint{6, 10} {
		h := NewHistogram(bits)
		for round := range 50 {
			fresh, sum := NewHistogram(bits), NewHistogram(bits)
			lo := rng.Int64N(1 << (2 + round%40))
			for range 1 + rng.IntN(300) {
				v := lo + rng.Int64N(1+lo*int64(1+round%5))
				if round%7 == 0 {
					v = 1<<maxExp + v // clamped into the last bucket
				}
				h.Record(v)
				fresh.Record(v)
			}
			if !slices.Equal(h.Counts(), fresh.Counts()) || h.N != fresh.N || h.Min != fresh.Min || h.Max != fresh.Max || h.Sum != fresh.Sum {
				t.Fatalf("bits %d, round %d: a reset histogram differs from a new one", bits, round)
			}
			sum.Merge(h)
			if !slices.Equal(sum.Counts(), fresh.Counts()) || sum.N != fresh.N {
				t.Fatalf("bits %d, round %d: merged into an empty one, the counts differ", bits, round)
			}
			h.Reset()
			if slices.ContainsFunc(h.Counts(), func(c uint64) bool { return c != 0 }) || h.N != 0 {
				t.Fatalf("bits %d, round %d: counts left after Reset", bits, round)
			}
		}
	}
}
