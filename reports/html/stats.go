package html

import (
	"math"
	"slices"
	"strconv"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim/quantile"
)

// MaxCDFPoints bounds the points of one run's CDF line, whatever the
// number of streams.
const MaxCDFPoints = 500

// cdfPoint is one point of an empirical CDF: the share P of values ≤ X.
type cdfPoint struct{ X, P float64 }

// cdfPoints samples the empirical CDF of sorted at most MaxCDFPoints
// ranks. Every point is exact (a value of sorted and its rank); 80 % of the
// points are spread evenly over the ranks and the rest over the top 1 %, so
// the tail the report is about keeps its shape. The first and the last
// value are always included.
func cdfPoints(sorted []float64) []cdfPoint {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	add := func(pts []cdfPoint, i int) []cdfPoint {
		if len(pts) > 0 && pts[len(pts)-1].P >= float64(i+1)/float64(n) {
			return pts
		}
		return append(pts, cdfPoint{X: sorted[i], P: float64(i+1) / float64(n)})
	}
	if n <= MaxCDFPoints {
		pts := make([]cdfPoint, 0, n)
		for i := range sorted {
			pts = add(pts, i)
		}
		return pts
	}
	const body, tail = MaxCDFPoints * 4 / 5, MaxCDFPoints / 5
	idx := func(p float64) int {
		i := int(math.Ceil(p*float64(n))) - 1
		return min(max(i, 0), n-1)
	}
	pts := make([]cdfPoint, 0, MaxCDFPoints)
	for k := range body {
		pts = add(pts, idx(0.99*float64(k)/float64(body-1)))
	}
	for k := 1; k <= tail; k++ {
		pts = add(pts, idx(0.99+0.01*float64(k)/float64(tail)))
	}
	return pts
}

// shareAtMost is the share of sorted that is ≤ x.
func shareAtMost(sorted []float64, x float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i, _ := slices.BinarySearchFunc(sorted, x, func(v, x float64) int {
		if v <= x {
			return -1
		}
		return 1
	})
	return float64(i) / float64(len(sorted))
}

// boxStats are the exact order statistics a box plot and its table show.
type boxStats struct {
	N                                      int
	Mean, Min, P1, P25, P50, P75, P90, P99 float64
	Max                                    float64
}

func boxOf(sorted []float64) boxStats {
	if len(sorted) == 0 {
		return boxStats{}
	}
	var s float64
	for _, v := range sorted {
		s += v
	}
	q := func(p float64) float64 { return quantile.Linear(sorted, p) }
	return boxStats{N: len(sorted), Mean: s / float64(len(sorted)), Min: sorted[0],
		P1: q(0.01), P25: q(0.25), P50: q(0.5), P75: q(0.75), P90: q(0.9), P99: q(0.99), Max: sorted[len(sorted)-1]}
}

// streamSets are one run's per-stream values, each sorted.
type streamSets struct {
	// P99 and Jitter cover finished streams with at least one gap.
	P99, Jitter []float64
	// TTFT, TPOT and E2EL cover finished streams (TPOT those with ≥ 2 tokens).
	TTFT, TPOT, E2EL []float64
}

func setsOf(r *reports.Run) streamSets {
	var s streamSets
	for i := range r.Streams {
		st := &r.Streams[i]
		if st.Status != "finished" {
			continue
		}
		s.TTFT = append(s.TTFT, st.TTFTMS)
		s.E2EL = append(s.E2EL, st.E2ELMS)
		if st.OutputTokens >= 2 {
			s.TPOT = append(s.TPOT, st.TPOTMS)
		}
		if st.Chunks >= 2 {
			s.P99 = append(s.P99, st.ITLP99MS)
			s.Jitter = append(s.Jitter, st.JitterRatio)
		}
	}
	for _, xs := range [][]float64{s.P99, s.Jitter, s.TTFT, s.TPOT, s.E2EL} {
		slices.Sort(xs)
	}
	return s
}

// jitterEdges are the upper edges of the jitter-ratio histogram's bins,
// the last +Inf: a fixed ladder with the unstable threshold u inserted, so
// the bins above u hold exactly the unstable streams.
func jitterEdges(u float64) []float64 {
	edges := []float64{1.25, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 50, 100}
	if u > 0 && !math.IsInf(u, 0) && !math.IsNaN(u) {
		edges = append(edges, u)
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	return append(edges, math.Inf(1))
}

// jitterLabel names bin i of edges.
func jitterLabel(edges []float64, i int) string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case i == 0:
		return "≤ " + g(edges[0])
	case math.IsInf(edges[i], 1):
		return "> " + g(edges[i-1])
	default:
		return g(edges[i-1]) + "–" + g(edges[i])
	}
}

// jitterCounts counts sorted values into the bins (edges[i-1], edges[i]].
func jitterCounts(sorted, edges []float64) []int {
	counts := make([]int, len(edges))
	b := 0
	for _, v := range sorted {
		for v > edges[b] {
			b++
		}
		counts[b]++
	}
	return counts
}

// sloShares are the shares of arrived requests meeting each SLO limit
// alone (rejected requests meet none); a limit of 0 is absent.
type sloShares struct {
	TTFT, TPOT, E2EL float64
	// OK is false when the run carries no per-stream rows.
	OK bool
}

func sloSharesOf(r *reports.Run) sloShares {
	if len(r.Streams) == 0 || r.Summary.Requests == 0 {
		return sloShares{}
	}
	slo := r.Config.Metrics.SLO
	var ttft, tpot, e2el int
	for i := range r.Streams {
		st := &r.Streams[i]
		if st.Status != "finished" {
			continue
		}
		if meets(st.TTFTMS, slo.TTFTMS) {
			ttft++
		}
		if meets(st.TPOTMS, slo.TPOTMS) {
			tpot++
		}
		if meets(st.E2ELMS, slo.E2ELMS) {
			e2el++
		}
	}
	n := float64(r.Summary.Requests)
	return sloShares{TTFT: float64(ttft) / n, TPOT: float64(tpot) / n, E2EL: float64(e2el) / n, OK: true}
}

// meets applies one SLO limit as reports does: 0 is no limit.
func meets(v, limit float64) bool { return limit <= 0 || v <= limit }

// Number formats for tables: fixed decimals, NaN and ±Inf as 0 like the
// JSON document.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func fx(v float64, d int) string { return strconv.FormatFloat(finite(v), 'f', d, 64) }
func f1(v float64) string        { return fx(v, 1) }
func f2(v float64) string        { return fx(v, 2) }
func f3(v float64) string        { return fx(v, 3) }
func pct(v float64) string       { return fx(v*100, 1) + "%" }
func itoa(v int) string          { return strconv.Itoa(v) }
func g(v float64) string         { return strconv.FormatFloat(finite(v), 'g', -1, 64) }

// round6 keeps six significant digits: chart data need no more, and
// shorter numbers keep the page small.
func round6(v float64) float64 {
	v = finite(v)
	if v == 0 {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// quantileOf is numpy's linear percentile of sorted, as reports computes them.
func quantileOf(sorted []float64, q float64) float64 { return quantile.Linear(sorted, q) }
