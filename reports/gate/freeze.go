package gate

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/itlsim/itlsim/sim"
)

// FrozenMetric is the share of served streams whose largest gap exceeds
// the stall threshold (metrics.stall_threshold_ms, 250 ms by default). It
// is judged by an exact test on the two counts, not by the bootstrap: a
// freeze of a few percent of streams moves a tail percentile by a jump the
// resampling cannot tell from noise (the p99 of 600 streams is the 6th
// largest; a resample holds more or fewer of the frozen ones), while the
// count of frozen streams is a plain binomial figure.
const FrozenMetric = "frozen_stream_share"

// Power is the probability with which a row's minimum detectable effect
// (Row.MDE) is detected, and PowerEffect the regression a gate must be able
// to detect on each metric it holds: a gate whose MDE is larger on any of
// its chosen metrics is inconclusive.
const (
	Power       = 0.8
	PowerEffect = 0.25
)

// frozenCounts counts r's served streams (finished or cancelled) and those
// of them whose largest gap is longer than thresholdMS.
func frozenCounts(r *sim.Result, thresholdMS float64) (frozen, served int) {
	thr := thresholdMS * 1e6
	for i := range r.Streams.Len() {
		st := r.Streams.At(i)
		if st.Status != sim.StatusFinished && st.Status != sim.StatusCancelled {
			continue
		}
		served++
		gap := float64(st.GapMax)
		if r.Measured != nil && i < len(r.Measured.Streams) {
			gap = r.Measured.Streams[i].GapMax
		}
		if gap > thr {
			frozen++
		}
	}
	return frozen, served
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// fisherUpper is the one-sided p-value of Fisher's exact test that the
// candidate's share kc/nc is higher than the baseline's kb/nb: under equal
// shares and the margins fixed, the candidate's count is hypergeometric
// (kb+kc frozen among nb+nc streams, nc drawn), and the p-value is
// P(X ≥ kc). Each term is a ratio of log-gamma values, so it is exact
// (to float64) for counts of many thousands without overflow.
func fisherUpper(kb, nb, kc, nc int) float64 {
	k, n := kb+kc, nb+nc
	lo, hi := max(0, k-nb), min(k, nc)
	pmf := func(x int) float64 { return math.Exp(lchoose(k, x) + lchoose(n-k, nc-x) - lchoose(n, nc)) }
	// up and down step the pmf from x to x+1 and x−1.
	up := func(x int) float64 { return float64(k-x) * float64(nc-x) / (float64(x+1) * float64(n-k-nc+x+1)) }
	down := func(x int) float64 { return float64(x) * float64(n-k-nc+x) / (float64(k-x+1) * float64(nc-x+1)) }
	mean := float64(k) * float64(nc) / float64(n)
	switch {
	case kc > hi:
		return 0
	case kc <= lo:
		return 1
	case float64(kc) >= mean:
		// Sum the upper tail from kc: the terms fall from there on.
		return min(1, tailSum(pmf(kc), kc, hi, 1, up))
	default:
		// kc is below the mean: 1 − P(X ≤ kc−1), the lower tail falling
		// from kc−1 down (summing up from a far-off kc would start from
		// a term that underflows to 0).
		return max(0, 1-tailSum(pmf(kc-1), kc-1, lo, -1, down))
	}
}

// tailSum sums a pmf's tail from x (whose term is p) towards end, each
// term from the last by ratio, until the terms no longer count.
func tailSum(p float64, x, end, step int, ratio func(int) float64) float64 {
	sum := p
	for x != end && p > 0 {
		p *= ratio(x)
		x += step
		sum += p
		if p < 1e-17*sum {
			break
		}
	}
	return sum
}

// fisherLower is P(X ≤ kc) under the same null: the test that the
// candidate's share is lower (an improvement).
func fisherLower(kb, nb, kc, nc int) float64 {
	return fisherUpper(nb-kb, nb, nc-kc, nc) // the non-frozen counts: more of them is fewer frozen
}

// binomUpper is P(Bin(n, p) ≥ k).
func binomUpper(n int, p float64, k int) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	r := p / (1 - p)
	up := func(x int) float64 { return float64(n-x) / float64(x+1) * r }
	down := func(x int) float64 { return float64(x) / float64(n-x+1) / r }
	if float64(k) >= float64(n)*p {
		return min(1, tailSum(binomPMF(n, p, k), k, n, 1, up))
	}
	return max(0, 1-tailSum(binomPMF(n, p, k-1), k-1, 0, -1, down))
}

// binomPMF is P(Bin(n, p) = k).
func binomPMF(n int, p float64, k int) float64 {
	switch {
	case p <= 0:
		if k == 0 {
			return 1
		}
		return 0
	case p >= 1:
		if k == n {
			return 1
		}
		return 0
	}
	return math.Exp(lchoose(n, k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// freezeFails reports whether counts kb/nb, kc/nc fail the freeze test: Fisher's
// one-sided p-value below alpha and the candidate's share more than tol
// above the baseline's, relatively (at large n a difference of no
// consequence is significant).
func freezeFails(kb, nb, kc, nc int, alpha, tol float64) bool {
	b, c := float64(kb)/float64(nb), float64(kc)/float64(nc)
	return c > b*(1+tol) && fisherUpper(kb, nb, kc, nc) < alpha
}

// freezeMDE is the smallest increase of the frozen share, in share points,
// that the freeze test detects with probability Power at these numbers of
// streams, when the baseline's true share is p0: the exact power of the
// test, Σ over the baseline's binomial count of P(candidate count ≥ the
// smallest count that fails), solved for the candidate's share by
// bisection. +Inf when not even a share of 1 is detected that often.
func freezeMDE(p0 float64, nb, nc int, alpha, tol float64) float64 {
	type crit struct {
		w float64 // P(baseline count = kb)
		k int     // smallest candidate count that fails against kb
	}
	var cs []crit
	for kb := 0; kb <= nb; kb++ {
		w := binomPMF(nb, p0, kb)
		if w < 1e-12 {
			if float64(kb) > float64(nb)*p0 {
				break
			}
			continue
		}
		// The p-value falls as kc grows: the smallest failing count by bisection.
		if !freezeFails(kb, nb, nc, nc, alpha, tol) {
			cs = append(cs, crit{w, nc + 1}) // no count fails
			continue
		}
		lo, hi := 0, nc // freezeFails(hi) holds
		for lo < hi {
			mid := (lo + hi) / 2
			if freezeFails(kb, nb, mid, nc, alpha, tol) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		cs = append(cs, crit{w, lo})
	}
	power := func(p1 float64) float64 {
		var s float64
		for _, c := range cs {
			s += c.w * binomUpper(nc, p1, c.k)
		}
		return s
	}
	if power(1) < Power {
		return math.Inf(1)
	}
	lo, hi := p0, 1.0
	for range 40 {
		mid := (lo + hi) / 2
		if power(mid) >= Power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - p0
}

// bootstrapMDE is the smallest true change a bootstrap row detects with
// probability Power: the interval's lower end falls beyond the tolerance
// when the change is tol + (z₁₋α + z_Power)·se, with se read off the
// interval's width (2·z₁₋α·se for a normal spread) and α its one-sided
// level. In the change's unit (relative, or share points); +Inf when the
// interval is unbounded.
func bootstrapMDE(low, high, alpha, tol float64) float64 {
	za := distuv.UnitNormal.Quantile(1 - alpha)
	zb := distuv.UnitNormal.Quantile(Power)
	w := high - low
	if math.IsNaN(w) || math.IsInf(w, 0) {
		return math.Inf(1)
	}
	se := w / (2 * za)
	return tol + (za+zb)*se
}
