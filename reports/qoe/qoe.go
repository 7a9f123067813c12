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
		s.Fluidity = fluidityOnes(e.TTFT, period, at, math.Inf(1)) // Fluidity's result, without the chunk-size terms
	} else {
		s.Fluidity = Fluidity(e.TTFT, period, at, tokens)
	}
	s.FluidRate = FluidRate(e.TTFT, at, tokens)
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
		}
		if j == len(next) {
			break
		}
		missed += math.Floor((next[j]-prev[j]-slack-period)/period) + 1
		slack = 0
	}
	total := float64(met) + missed
	if total == 0 {
		return 1
	}
	return clamp01(1 - missed/total)
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
	return fluidRate(ttft, at, tokens, true)
}

// fluidRate is FluidRate; skip answers a probe at which no deadline can be
// missed without a pass (tests compare it with every pass run).
func fluidRate(ttft float64, at []float64, tokens []int, skip bool) float64 {
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
	if n == len(tokens) { // every chunk one token: the common case, without the chunk-size terms
		pass = func(period float64) float64 { return fluidityOnes(ttft, period, at, budget) }
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
