package qoe

import "math"

// Expectation is the delivery a person expects, in nanoseconds and tokens.
type Expectation struct {
	// TTFT is the accepted wait for the first token, ns.
	TTFT float64
	// TokensPerS is the expected delivery speed, tokens per second.
	TokensPerS float64
}

// FluidTarget is the share of deadlines the fluid token rate keeps met.
const FluidTarget = 0.99

// Scores are one stream's perceived scores.
type Scores struct {
	QoE       float64 // Andes, in [0, 1]
	Fluidity  float64 // Etalon's fluidity index, in [0, 1]
	FluidRate float64 // tokens/s at which the stream meets FluidTarget of its deadlines; 0 when none
}

// Score scores a stream whose chunk k reached the client at at[k]
// nanoseconds after the request was sent, carrying tokens[k] tokens
// (at least one each). ok is false for a stream without chunks or without
// a valid expectation.
func Score(e Expectation, at []float64, tokens []int) (s Scores, ok bool) {
	if len(at) == 0 || len(at) != len(tokens) || !(e.TokensPerS > 0) || !(e.TTFT >= 0) {
		return Scores{}, false
	}
	s.QoE = Andes(e, at, tokens)
	period := 1e9 / e.TokensPerS
	if ones(tokens) {
		// Fluidity's result, without the chunk-size terms and without
		// reading the chunks once the slack covers the rest (excess).
		var x excess
		x.fill(at)
		s.Fluidity, _ = fluidityOnesCovered(e.TTFT, period, at, math.Inf(1), x.cover(period))
		s.FluidRate = fluidRate(e.TTFT, at, tokens, true, false, &x)
	} else {
		s.Fluidity = Fluidity(e.TTFT, period, at, tokens)
		s.FluidRate = FluidRate(e.TTFT, at, tokens)
	}
	return s, true
}

// Andes is the stream's QoE: 1 − S_delay/S_expected, where the expected
// curve is 0 tokens until e.TTFT and then rises at e.TokensPerS to the
// stream's total, the delivered curve steps up by each chunk's tokens at
// its time, S_delay is the area by which delivery lags the expected curve
// and S_expected the area under the expected curve, both up to the later
// of the last chunk and the expected curve's end.
func Andes(e Expectation, at []float64, tokens []int) float64 {
	n := 0.0
	for _, k := range tokens {
		n += float64(max(k, 1))
	}
	v := e.TokensPerS / 1e9 // tokens per ns
	t0 := e.TTFT
	tf := t0 + n/v // the expected curve reaches n
	end := max(tf, at[len(at)-1])
	// lag integrates max(0, E(t) − c) over [a, b]. Its minima and
	// maxima are comparisons, not min() and max(), whose NaN and
	// signed-zero rules cost instructions for every chunk: every time
	// here is finite and none is −0, so the results are the same.
	lag := func(a, b, c float64) float64 {
		if c >= n || b <= a {
			return 0
		}
		if x := t0 + c/v; x > a { // E(t) ≥ c from here
			a = x
		}
		if b <= a {
			return 0
		}
		var area float64
		r := b
		if tf < r {
			r = tf
		}
		if r > a { // on the ramp: E = (t − t0)·v
			area += v/2*((r-t0)*(r-t0)-(a-t0)*(a-t0)) - c*(r-a)
		}
		l := a
		if tf > l {
			l = tf
		}
		if b > l { // flat at n
			area += (n - c) * (b - l)
		}
		return area
	}
	delay := lag(0, at[0], 0)
	cum := 0.0
	for k := range at {
		cum += float64(max(tokens[k], 1))
		next := end
		if k+1 < len(at) {
			next = at[k+1]
		}
		delay += lag(at[k], next, cum)
	}
	expected := n*n/(2*v) + n*(end-tf)
	if !(expected > 0) {
		return 1
	}
	return clamp01(1 - delay/expected)
}

// Fluidity is Etalon's fluidity index of the stream with the first
// token's deadline ttft and a period between deadlines, in ns. Tokens of
// one chunk arrive together: the second and later ones at no interval, so
// each meets its deadline and adds a period of slack.
func Fluidity(ttft, period float64, at []float64, tokens []int) float64 {
	return fluidity(ttft, period, at, tokens, math.Inf(1))
}

// fluidity is Fluidity that stops once more than budget deadlines are
// missed (returning the index so far, already below the target).
func fluidity(ttft, period float64, at []float64, tokens []int, budget float64) float64 {
	var total, missed, slack, prev float64
	for k, t := range at {
		interval, d := t-prev, period
		if k == 0 {
			interval, d = t, ttft
		}
		if interval <= d+slack {
			slack += d - interval
			total++
		} else {
			misses := math.Floor((interval-slack-d)/period) + 1
			missed += misses
			total += misses
			slack = 0
			if missed > budget {
				break
			}
		}
		if rest := float64(max(tokens[k], 1) - 1); rest > 0 {
			total += rest
			slack += rest * period
		}
		prev = t
	}
	if total == 0 {
		return 1
	}
	return clamp01(1 - missed/total)
}

// fluidityOnes is fluidity for a stream whose every chunk is one token,
// with the same operations in the same order (so the same result), less
// the per-chunk terms that are then zero: FluidRate runs it a dozen times
// a stream. The loop carries only the slack in a float register: met
// deadlines are an integer count (the total, met plus missed, is a sum of
// whole numbers below 2^53, the same added in any order) and each
// interval is read from the times, not carried.
func fluidityOnes(ttft, period float64, at []float64, budget float64) float64 {
	if len(at) == 0 {
		return 1
	}
	x, _ := fluidityOnesCovered(ttft, period, at, budget, math.Inf(1))
	return x
}

// fluidityOnesCovered is fluidityOnes that counts the deadlines after the
// slack first reaches covered as met without reading them (excess); read
// is the intervals it read.
func fluidityOnesCovered(ttft, period float64, at []float64, budget, covered float64) (index float64, read int) {
	var missed, slack float64
	met := 0
	// The first chunk's deadline is ttft.
	if t := at[0]; t <= ttft+slack {
		slack += ttft - t
		met++
	} else {
		missed += math.Floor((t-slack-ttft)/period) + 1
		slack = 0
	}
	// next[j] follows prev[j]: chunk j+1 and the one before it.
	next := at[1:]
	prev := at[:len(next)]
	read = len(next)
	for j := 0; j < len(next) && missed <= budget; j++ {
		// The deadlines met, in a loop of their own: the compiler keeps
		// its few values in registers without moving them about.
		for ; uint(j) < uint(len(next)); j++ { // unsigned: no bounds checks
			interval := next[j] - prev[j]
			if !(interval <= period+slack) {
				break
			}
			slack += period - interval
			met++
			if slack >= covered {
				// The slack covers every later interval's excess over
				// the period: each later deadline is met (excess).
				met += len(next) - 1 - j
				read, j = j+1, len(next)-1
			}
		}
		if j == len(next) {
			break
		}
		missed += math.Floor((next[j]-prev[j]-slack-period)/period) + 1
		slack = 0
	}
	total := float64(met) + missed
	if total == 0 {
		return 1, read
	}
	return clamp01(1 - missed/total), read
}

// excess bounds, for any period p, the sum of a stream's intervals'
// excesses over it, W(p) = Σ max(0, g − p) over the intervals g between
// chunks: a slack of cover(p) or more before an interval meets every
// deadline after it. The intervals are counted in log-linear buckets
// (eight to a power of two from 2^14 ns, the first holding all below, the
// last all from 2^36 ns and any interval not a number); W(p) is at most
// the sum, over p's bucket and those above, of each interval's bucket's
// upper edge less p. fill counts them once per stream; each period's
// bound then takes a few operations, not a pass.
//
// Why the rest is met: with slack s ≥ W'(1+ε) before an interval, W' the
// excess still to come, the interval g is met (s ≥ g − p, so p + s ≥ g and
// fl(p + s) ≥ g) and leaves s' = fl(s + fl(p − g)) ≥ s when g ≤ p, else
// s' ≥ (s − (g − p)(1+u))(1−u) ≥ (1+ε)(1−u)·W”, u = 2^−53: by induction
// every later deadline is met while (1+ε)(1−u)^n ≥ 1+u, n the intervals,
// which ε = 2^−19 holds for n < 2^22; cover adds 2^−30 of its sums for
// their own rounding. A pass may then count the rest as met without
// reading it: the same counts, the same result.
type excess struct {
	off bool // an interval from 2^36 ns, not a number, or too many: no bound
	// count[b] is the number of intervals in bucket b or higher, upper[b]
	// the sum of their buckets' upper edges.
	count, upper [excessBuckets + 1]float64
}

// excessBuckets is the buckets of an excess: the one below 2^14 ns, eight
// for each power of two up to 2^36 ns, and the one from there.
const excessBuckets = 22*8 + 2

// excessBucket is g's bucket; an interval not a number goes to the last.
func excessBucket(g float64) int {
	if g < 0x1p14 {
		return 0
	}
	bits := math.Float64bits(g)
	b := int(bits>>52-(1023+14))*8 + int(bits>>49&7) + 1
	return min(b, excessBuckets-1)
}

// excessUpper is bucket b's upper edge (exclusive), below the last.
func excessUpper(b int) float64 {
	return math.Float64frombits(uint64(b/8+1023+14)<<52 | uint64(b%8)<<49)
}

// fill counts the intervals between at's chunks.
func (x *excess) fill(at []float64) {
	var n [excessBuckets]uint32
	for k := 1; k < len(at); k++ {
		n[excessBucket(at[k]-at[k-1])]++
	}
	x.off = n[excessBuckets-1] > 0 || len(at) >= 1<<22
	x.count[excessBuckets-1], x.upper[excessBuckets-1] = 0, 0
	for b := excessBuckets - 2; b >= 0; b-- {
		c := float64(n[b])
		x.count[b] = x.count[b+1] + c
		x.upper[b] = x.upper[b+1] + c*excessUpper(b)
	}
}

// cover is a slack that meets every deadline after it at period p > 0.
func (x *excess) cover(p float64) float64 {
	b := excessBucket(p)
	if x.off || b == excessBuckets-1 {
		return math.Inf(1)
	}
	u, c := x.upper[b], x.count[b]
	return (u - c*p + 0x1p-30*(u+c*p)) * (1 + 0x1p-19)
}

// FluidRate is the highest token rate (tokens/s) at which the stream
// meets FluidTarget of its deadlines, the first deadline held at ttft ns;
// 0 when it misses the target even at the slowest rate searched (a short
// stream whose first token came late). It is found by bisection on a log
// scale to within 5 %, between 0.01 and 100000 tokens/s, starting from the
// bracket the stream's gaps set: at one period per largest gap no decode
// deadline is missed, and above one token per mean gap the deadlines
// outrun the stream.
func FluidRate(ttft float64, at []float64, tokens []int) float64 {
	return fluidRate(ttft, at, tokens, true, false, nil)
}

// fluidRate is FluidRate; skip answers a probe at which no deadline can be
// missed without a pass, and general runs fluidity's pass, which reads
// every chunk, where fluidityOnes would do (tests compare both with every
// pass run in full); x, when not nil, is the stream's excess (filled here
// when nil and needed).
func fluidRate(ttft float64, at []float64, tokens []int, skip, general bool, x *excess) float64 {
	// A pass stops once it has missed more deadlines than the target
	// allows: met ≤ tokens, and the index is ≥ FluidTarget only while
	// missed ≤ met·(1 − FluidTarget)/FluidTarget.
	n := 0
	for _, k := range tokens {
		n += max(k, 1)
	}
	budget := float64(n) * (1 - FluidTarget) / FluidTarget
	var maxGap float64 // the largest interval between chunks
	toks := 0
	for k := 1; k < len(at); k++ {
		// Not max(): its NaN and signed-zero rules make a slow chain of
		// the loop, and intervals between finite times are neither.
		if g := at[k] - at[k-1]; g > maxGap {
			maxGap = g
		}
		toks += max(tokens[k], 1)
	}
	pass := func(period float64) float64 { return fluidity(ttft, period, at, tokens, budget) }
	if n == len(tokens) && !general { // every chunk one token: the common case, without the chunk-size terms
		if x == nil {
			x = new(excess)
			x.fill(at)
		}
		pass = func(period float64) float64 {
			f, _ := fluidityOnesCovered(ttft, period, at, budget, x.cover(period))
			return f
		}
	}
	ok := func(rate float64) bool {
		period := 1e9 / rate
		if skip && len(at) > 0 && at[0] <= ttft && maxGap <= period {
			// The first chunk by its deadline and no interval longer
			// than a period: every deadline is met, the index is 1,
			// without a pass (the bracket's lower end, usually).
			return true
		}
		return pass(period) >= FluidTarget
	}
	lo, hi := math.Log(0.01), math.Log(1e5)
	if m := len(at); m >= 2 {
		if maxGap > 0 {
			lo = max(lo, min(hi, math.Log(1e9/maxGap)))
		}
		if span := at[m-1] - at[0]; span > 0 {
			hi = min(hi, max(lo, math.Log(1.05*1e9*float64(toks)/span)))
		}
	}
	if !ok(math.Exp(lo)) {
		lo = math.Log(0.01)
		if !ok(math.Exp(lo)) {
			return 0
		}
	}
	if ok(math.Exp(hi)) {
		if hi = math.Log(1e5); ok(math.Exp(hi)) {
			return math.Exp(hi)
		}
	}
	for hi-lo > 0.05 {
		mid := (lo + hi) / 2
		if ok(math.Exp(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp(lo)
}

func clamp01(x float64) float64 { return min(1, max(0, x)) }

// ones reports whether every chunk carries one token (or, as counted
// everywhere here, fewer).
func ones(tokens []int) bool {
	for _, k := range tokens {
		if k > 1 {
			return false
		}
	}
	return true
}
