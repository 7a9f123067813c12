package study

import (
	"fmt"
	"math"
	"slices"

	"github.com/itlsim/itlsim/sim"
)

// Verdicts of the steady-state test (Steady.Verdict).
const (
	// VerdictStable: the backlog trend's upper confidence bound is below
	// the material growth (SteadyRule.Growth × the arrival rate).
	VerdictStable = "stable"
	// VerdictUnstable: the trend is significantly above 0 and at least the
	// material growth: the backlog grows.
	VerdictUnstable = "unstable"
	// VerdictInconclusive: neither, or the warm-up never ended (MSER-5's
	// truncation point at the end of the first half).
	VerdictInconclusive = "inconclusive"
	// VerdictTooFew: fewer admitted arrivals after the warm-up than
	// MinArrivals; stability is not judged.
	VerdictTooFew = "too few arrivals"
)

// SteadyRule is how a run's steady state is judged. The run's backlog is
// its in-system count n(t) (admitted requests that arrived and have not
// ended), averaged over Bins equal bins of the arrival span [first
// arrival, last arrival].
//
// Warm-up: MSER-5 (White 1997; White, Cobb and Spratt 2000): batch means
// Z_1…Z_k of 5 bins each; the truncation point d* minimises
// MSER(d) = Σ_{j>d} (Z_j − Z̄_d)² / (k − d)² over d in [0, k/2]. The
// warm-up is the first 5·d* bins. A d* at k/2 means the series was still
// moving at the end of its first half: no steady state yet.
//
// Stability: the trend window (the bins after the warm-up) is cut into
// Batches batch means; the OLS slope of the batch means against time,
// with its standard error from the batch means' residuals (Student's t
// with Batches − 2 degrees of freedom, one-sided 95 %), is the backlog
// trend in requests per second. The run is unstable when the slope's
// lower bound is above Growth × the arrival rate (significantly more
// than that share of the arrivals piles up); stable when the slope's
// upper bound is below it; otherwise inconclusive. A trend window shorter
// than Relax times the mean time in system (by Little's law, the mean
// backlog over the arrival rate) still holds the fill-up of the longer
// streams: in it only a growth above Gross times the material one is
// judged (unstable), anything else is inconclusive. Fewer than
// MinArrivals admitted arrivals in the trend window are not judged.
type SteadyRule struct {
	Bins        int     `json:"bins"`
	Batches     int     `json:"batches"`
	Growth      float64 `json:"growth"`
	Relax       float64 `json:"relax"`
	Gross       float64 `json:"gross"`
	MinArrivals int     `json:"min_arrivals"`
}

// DefaultSteadyRule: 500 bins (100 MSER-5 batches), 10 trend batches, a
// material growth of 2 % of the arrivals, a window of at least 10 times
// the time in system (else a gross growth of 5 × 2 %), and at least 200
// arrivals.
func DefaultSteadyRule() SteadyRule {
	return SteadyRule{Bins: 500, Batches: 10, Growth: 0.02, Relax: 10, Gross: 5, MinArrivals: 200}
}

// Steady is one run's steady-state verdict: the JSON of a point's
// "steady".
type Steady struct {
	Verdict string `json:"verdict"`
	// WarmUpS is the MSER-5 warm-up from the first arrival, s.
	WarmUpS float64 `json:"warm_up_s"`
	// Arrivals is the admitted arrivals in the trend window.
	Arrivals int `json:"arrivals"`
	// TrendPerS is the backlog trend, requests/s, with its 95 % one-sided
	// bounds; TrendPctPerMin the trend as a share of the window's mean
	// backlog per minute (percent).
	TrendPerS      float64 `json:"trend_req_per_s"`
	TrendLow       float64 `json:"trend_low"`
	TrendHigh      float64 `json:"trend_high"`
	TrendPctPerMin float64 `json:"trend_pct_per_min"`
	// LimitPerS is the material growth the trend is held to, requests/s.
	LimitPerS float64 `json:"limit_req_per_s"`
	// Requests is the run's requests (or, for a duration-bounded workload,
	// its seconds of arrivals) after Extensions doublings.
	Requests   float64 `json:"length"`
	Extensions int     `json:"extensions"`
	// Note says the verdict in words.
	Note string `json:"note"`

	warmEnd float64 // ns, absolute: the end of the warm-up
}

// Conclusive tells whether the verdict is stable or unstable.
func (s *Steady) Conclusive() bool {
	return s.Verdict == VerdictStable || s.Verdict == VerdictUnstable
}

// Judge reads the steady state of run r (the server's view).
func (rule SteadyRule) Judge(r *sim.Result) Steady {
	var arr, end []float64
	for i := range r.Streams.Len() {
		st := r.Streams.At(i)
		if st.Status == sim.StatusRejected {
			continue
		}
		arr = append(arr, float64(st.Arrival))
		end = append(end, float64(st.Arrival+st.E2EL))
	}
	out := Steady{Verdict: VerdictTooFew}
	if len(arr) < 2 {
		out.Note = fmt.Sprintf("%d admitted arrivals: stability not judged (at least %d needed)", len(arr), rule.MinArrivals)
		return out
	}
	slices.Sort(arr)
	slices.Sort(end)
	first, last := arr[0], arr[len(arr)-1]
	out.warmEnd = first
	if last <= first {
		out.Note = "every request arrived at once: stability not judged"
		return out
	}
	nb := rule.Bins - rule.Bins%5
	w := (last - first) / float64(nb)
	bins := backlogBins(arr, end, first, w, nb)

	// MSER-5.
	k := nb / 5
	z := make([]float64, k)
	for j := range k {
		z[j] = (bins[5*j] + bins[5*j+1] + bins[5*j+2] + bins[5*j+3] + bins[5*j+4]) / 5
	}
	dStar, best := 0, math.Inf(1)
	for d := 0; d <= k/2; d++ {
		var sum float64
		for _, v := range z[d:] {
			sum += v
		}
		mean := sum / float64(k-d)
		var ss float64
		for _, v := range z[d:] {
			ss += (v - mean) * (v - mean)
		}
		if m := ss / float64((k-d)*(k-d)); m < best {
			dStar, best = d, m
		}
	}
	lo := first + float64(5*dStar)*w
	out.warmEnd = lo
	out.WarmUpS = sig6((lo - first) / 1e9)
	from := sort0(arr, lo)
	out.Arrivals = len(arr) - from
	spanS := (last - lo) / 1e9
	rate := float64(out.Arrivals) / spanS
	out.LimitPerS = sig6(rule.Growth * rate)
	if out.Arrivals < rule.MinArrivals {
		out.Note = fmt.Sprintf("%d admitted arrivals after the warm-up: stability not judged (at least %d needed)", out.Arrivals, rule.MinArrivals)
		return out
	}

	// The trend over batch means of the window's bins.
	win := bins[5*dStar:]
	m := rule.Batches
	per := len(win) / m
	var ts, ys []float64
	var meanN float64
	for b := range m {
		var s float64
		for _, v := range win[b*per : (b+1)*per] {
			s += v
		}
		ys = append(ys, s/float64(per))
		ts = append(ts, (float64(b*per)+float64(per)/2)*w/1e9)
		meanN += s / float64(per) / float64(m)
	}
	slope, se := olsSlope(ts, ys)
	tq := tQuantile95(m - 2)
	out.TrendPerS = sig6(slope)
	out.TrendLow, out.TrendHigh = sig6(slope-tq*se), sig6(slope+tq*se)
	if meanN > 0 {
		out.TrendPctPerMin = sig6(100 * 60 * slope / meanN)
	}
	limit := rule.Growth * rate
	// A window shorter than a few times the mean time in system (Little:
	// backlog / arrival rate) still holds the fill-up of the longer
	// streams; only a gross growth is judged in it.
	inSystemS := meanN / rate
	short := spanS < rule.Relax*inSystemS
	switch {
	case slope-tq*se > limit && (!short || slope-tq*se > rule.Gross*limit):
		out.Verdict = VerdictUnstable
		out.Note = fmt.Sprintf("the backlog grew by %s requests/s (%+.3g %%/min; 95 %% bound %s, above %.0f %% of the %s/s arriving): not a steady state",
			num(slope), out.TrendPctPerMin, num(slope-tq*se), 100*rule.Growth, num(rate))
	case dStar == k/2:
		out.Verdict = VerdictInconclusive
		out.Note = fmt.Sprintf("inconclusive: the warm-up did not end in the first half of the arrivals (MSER-5); backlog trend %+.3g %%/min", out.TrendPctPerMin)
	case short:
		out.Verdict = VerdictInconclusive
		out.Note = fmt.Sprintf("inconclusive: backlog trend %+.3g %%/min over %.0f s after the warm-up, under %g times the %.1f s a request spends in the system", out.TrendPctPerMin, spanS, rule.Relax, inSystemS)
	case slope+tq*se < limit:
		out.Verdict = VerdictStable
		out.Note = fmt.Sprintf("backlog trend %+.3g %%/min, 95 %% bound %s requests/s below the %s/s (%.0f %% of arrivals) that would be growth",
			out.TrendPctPerMin, num(slope+tq*se), num(limit), 100*rule.Growth)
	default:
		out.Verdict = VerdictInconclusive
		out.Note = fmt.Sprintf("inconclusive: backlog trend %+.3g %%/min (%s requests/s, 95 %% bounds %s to %s; growth is %s/s)",
			out.TrendPctPerMin, num(slope), num(slope-tq*se), num(slope+tq*se), num(limit))
	}
	return out
}

// sort0 is the index of the first value ≥ x in sorted xs.
func sort0(xs []float64, x float64) int {
	i, _ := slices.BinarySearch(xs, x)
	return i
}

// backlogBins is the time-averaged in-system count over nb bins of width w
// from t0, from sorted arrival and end times.
func backlogBins(arr, end []float64, t0, w float64, nb int) []float64 {
	bins := make([]float64, nb)
	// n(t) = #arrivals ≤ t − #ends ≤ t; integrate each step over the bins.
	i, j := 0, 0
	n := 0.0
	t := t0
	// Requests before t0 (none arrive before the first arrival).
	for i < len(arr) && arr[i] <= t0 {
		i++
		n++
	}
	for j < len(end) && end[j] <= t0 {
		j++
		n--
	}
	tEnd := t0 + w*float64(nb)
	for t < tEnd {
		next := tEnd
		if i < len(arr) && arr[i] < next {
			next = arr[i]
		}
		if j < len(end) && end[j] < next {
			next = end[j]
		}
		addSpan(bins, t0, w, t, next, n)
		t = next
		for i < len(arr) && arr[i] <= t {
			i++
			n++
		}
		for j < len(end) && end[j] <= t {
			j++
			n--
		}
	}
	for b := range bins {
		bins[b] /= w
	}
	return bins
}

// addSpan adds n × the overlap of [a, b) with each bin.
func addSpan(bins []float64, t0, w, a, b, n float64) {
	if n == 0 || b <= a {
		return
	}
	for a < b {
		k := int((a - t0) / w)
		if k >= len(bins) {
			return
		}
		k = max(k, 0)
		hi := min(b, t0+float64(k+1)*w)
		if hi <= a { // rounding at a bin edge
			hi = min(b, a+w)
		}
		bins[k] += n * (hi - a)
		a = hi
	}
}

// olsSlope is the least-squares slope of y on x and its standard error.
func olsSlope(x, y []float64) (slope, se float64) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return 0, 0
	}
	slope = sxy / sxx
	var rss float64
	for i := range x {
		r := y[i] - my - slope*(x[i]-mx)
		rss += r * r
	}
	if len(x) > 2 {
		se = math.Sqrt(rss / (n - 2) / sxx)
	}
	return slope, se
}

// tQuantile95 is Student's t one-sided 95 % quantile for df degrees of
// freedom (t_{0.95, df}).
func tQuantile95(df int) float64 {
	table := []float64{0, 6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812,
		1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725,
		1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697}
	switch {
	case df < 1:
		return math.Inf(1)
	case df < len(table):
		return table[df]
	default:
		return 1.645 + 2.4/float64(df) // within 0.003 of the exact value above 30
	}
}

// tQuantile975 is Student's t two-sided 95 % quantile (t_{0.975, df}).
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return math.Inf(1)
	case df < len(table):
		return table[df]
	default:
		return 1.960 + 2.5/float64(df)
	}
}
