package quantile

import (
	"fmt"
	"math"
	"math/bits"
)

// maxExp bounds the values a Histogram resolves: values at or above 2^maxExp
// (2^44 ns ≈ 4.9 hours) are clamped into the last bucket.
const maxExp = 44

// Histogram counts non-negative integers in log-linear buckets: values below
// 2^Bits are exact; above, each power-of-two range is split into 2^Bits equal
// buckets, so a bucket's width is at most 2^−Bits of its lower bound (Bits=10:
// within 0.1 %). Quantiles use each bucket's midpoint as the value of every
// sample in it, with numpy's linear interpolation between ranks, so they are
// within that relative error of the exact result.
//
// Recording is O(1); above eagerBits, the buckets of one power-of-two range
// (a group of 2^Bits) are allocated when the first sample falls in it, so a histogram
// of latencies holds the few ranges they span (a cluster keeps dozens of
// histograms per replica), and recording never allocates once they are.
// Two histograms with the same Bits merge by adding counts, so results of
// separate runs or shards combine. The zero value is unusable; build one
// with [NewHistogram].
type Histogram struct {
	Bits   uint       // sub-bucket bits: relative resolution 2^−Bits
	groups [][]uint64 // bucket counts by group (index from bucketOf >> Bits); nil until used
	N      uint64     // number of samples
	Sum    float64    // exact sum of samples (for the mean)
	Min    int64      // smallest sample (exact); meaningful when N > 0
	Max    int64      // largest sample (exact); meaningful when N > 0
}

// NewHistogram returns an empty histogram with 2^−bits relative resolution.
// bits must lie in [1, 16].
func NewHistogram(bits uint) *Histogram {
	if bits < 1 || bits > 16 {
		panic(fmt.Sprintf("quantile: histogram bits %d outside [1,16]", bits))
	}
	h := &Histogram{Bits: bits, groups: make([][]uint64, maxExp-int(bits)+1)}
	if bits <= eagerBits {
		// Small enough to hold whole: one allocation, and no other later.
		all := make([]uint64, h.buckets())
		for g := range h.groups {
			h.groups[g] = all[g<<bits : (g+1)<<bits : (g+1)<<bits]
		}
	}
	return h
}

// eagerBits is the resolution up to which a histogram allocates every
// group at once (at 6 bits, 20 KB): time-series buckets come and go by the
// thousand, and allocating their groups one by one would make allocations
// grow with the run.
const eagerBits = 6

// buckets is the number of buckets.
func (h *Histogram) buckets() int { return len(h.groups) << h.Bits }

// add adds n to bucket i, allocating its group on first use.
func (h *Histogram) add(i int, n uint64) {
	g := h.groups[i>>h.Bits]
	if g == nil {
		g = make([]uint64, 1<<h.Bits)
		h.groups[i>>h.Bits] = g
	}
	g[i&(1<<h.Bits-1)] += n
}

// each calls fn for every non-empty bucket, in increasing order, until fn
// returns false.
func (h *Histogram) each(fn func(i int, c uint64) bool) {
	for gi, g := range h.groups {
		for j, c := range g {
			if c != 0 && !fn(gi<<h.Bits|j, c) {
				return
			}
		}
	}
}

// Counts returns every bucket's count, index from bucketOf (a copy, for
// tests and inspection).
func (h *Histogram) Counts() []uint64 {
	out := make([]uint64, h.buckets())
	h.each(func(i int, c uint64) bool { out[i] = c; return true })
	return out
}

func (h *Histogram) bucketOf(v int64) int {
	if v < 0 {
		v = 0
	}
	if v < 1<<h.Bits {
		return int(v)
	}
	if v >= 1<<maxExp {
		return h.buckets() - 1
	}
	e := bits.Len64(uint64(v)) - 1 // msb position, ≥ Bits
	sub := int(v>>(uint(e)-h.Bits)) & (1<<h.Bits - 1)
	return (e-int(h.Bits)+1)<<h.Bits + sub
}

// bounds returns the smallest value in bucket i and the bucket's width.
func (h *Histogram) bounds(i int) (lower, width int64) {
	if i < 1<<h.Bits {
		return int64(i), 1
	}
	g := i >> h.Bits
	sub := int64(i & (1<<h.Bits - 1))
	e := uint(g) + h.Bits - 1
	shift := e - h.Bits
	return int64(1)<<e | sub<<shift, int64(1) << shift
}

// Record adds one sample.
func (h *Histogram) Record(v int64) {
	h.add(h.bucketOf(v), 1)
	if h.N == 0 || v < h.Min {
		h.Min = v
	}
	if h.N == 0 || v > h.Max {
		h.Max = v
	}
	h.N++
	h.Sum += float64(v)
}

// RecordN adds n samples of value v (n ≥ 1).
func (h *Histogram) RecordN(v int64, n uint64) {
	if n == 0 {
		return
	}
	h.add(h.bucketOf(v), n)
	if h.N == 0 || v < h.Min {
		h.Min = v
	}
	if h.N == 0 || v > h.Max {
		h.Max = v
	}
	h.N += n
	h.Sum += float64(v) * float64(n)
}

// Mean is the exact mean of the samples, NaN when empty.
func (h *Histogram) Mean() float64 {
	if h.N == 0 {
		return math.NaN()
	}
	return h.Sum / float64(h.N)
}

// value is the representative of every sample in bucket i: the bucket's
// midpoint, clamped to the exact extremes.
func (h *Histogram) value(i int) float64 {
	lo, w := h.bounds(i)
	v := float64(lo) + float64(w-1)/2
	// The extreme samples are known exactly.
	if v < float64(h.Min) {
		v = float64(h.Min)
	}
	if v > float64(h.Max) {
		v = float64(h.Max)
	}
	return v
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) with numpy's linear
// interpolation between the ranks ⌊(N−1)q⌋ and the next; NaN when empty.
func (h *Histogram) Quantile(q float64) float64 {
	if h.N == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return float64(h.Min)
	}
	if q >= 1 {
		return float64(h.Max)
	}
	r := float64(h.N-1) * q
	lo := uint64(math.Floor(r))
	frac := r - float64(lo)
	var cum uint64
	a, b := math.NaN(), math.NaN()
	h.each(func(i int, c uint64) bool {
		next := cum + c
		if math.IsNaN(a) && lo < next {
			a = h.value(i)
		}
		if lo+1 < next {
			b = h.value(i)
			return false
		}
		cum = next
		return true
	})
	if math.IsNaN(b) {
		b = float64(h.Max)
	}
	return a + frac*(b-a)
}

// Merge adds o's samples to h. Both must have the same Bits.
func (h *Histogram) Merge(o *Histogram) {
	if o.Bits != h.Bits {
		panic(fmt.Sprintf("quantile: merging histograms of %d and %d bits", h.Bits, o.Bits))
	}
	if o.N == 0 {
		return
	}
	// Every sample lies between o's extremes: only their groups can
	// hold counts (a time-series bucket's gaps span a few of its 40).
	lo, hi := o.usedGroups()
	for gi := lo; gi <= hi; gi++ {
		g := o.groups[gi]
		if g == nil {
			continue
		}
		if h.groups[gi] == nil {
			h.groups[gi] = make([]uint64, len(g))
		}
		dst := h.groups[gi][:len(g)]
		for j, c := range g {
			dst[j] += c
		}
	}
	if h.N == 0 || o.Min < h.Min {
		h.Min = o.Min
	}
	if h.N == 0 || o.Max > h.Max {
		h.Max = o.Max
	}
	h.N += o.N
	h.Sum += o.Sum
}

// Reset empties the histogram, keeping its buckets.
func (h *Histogram) Reset() {
	if h.N > 0 {
		lo, hi := h.usedGroups()
		for _, g := range h.groups[lo : hi+1] {
			clear(g)
		}
	}
	h.N, h.Sum, h.Min, h.Max = 0, 0, 0, 0
}

// usedGroups is the range of groups [lo, hi] that can hold counts: those
// of the smallest and the largest sample and between. h must not be empty.
func (h *Histogram) usedGroups() (lo, hi int) {
	return h.bucketOf(h.Min) >> h.Bits, h.bucketOf(h.Max) >> h.Bits
}

// Std is the population standard deviation of the samples (numpy's std),
// each sample taken at its bucket's representative value around the
// exact mean: within the histogram's resolution. NaN when empty.
func (h *Histogram) Std() float64 {
	if h.N == 0 {
		return math.NaN()
	}
	mean := h.Mean()
	var ss float64
	h.each(func(i int, c uint64) bool {
		d := h.value(i) - mean
		ss += float64(c) * d * d
		return true
	})
	return math.Sqrt(ss / float64(h.N))
}
