package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/sim/quantile"
)

// DefaultPercentiles are the percentiles tables, the JSON summary and the
// gate show unless metrics.percentiles (--percentiles) chooses others.
var DefaultPercentiles = []float64{50, 90, 95, 99}

// Quantile is one chosen percentile of a distribution: P in (0, 100).
type Quantile struct {
	P float64
	V float64
}

// Dist summarizes a distribution (a latency in milliseconds, a ratio or a
// score). N is the size of the population; when it is 0 the distribution
// is undefined: every figure is 0 here, null in JSON and n/a in tables,
// never a measured 0.
//
// Mean, P50, P90, P95, P99 and Max are always computed; Q holds the
// percentiles chosen by metrics.percentiles, in increasing order, and is
// what the JSON and the tables show.
type Dist struct {
	N    int
	Mean float64
	Min  float64
	P50  float64
	P90  float64
	P95  float64
	P99  float64
	Max  float64
	Q    []Quantile
}

// Spread summarizes a per-stream statistic across streams (the p99 across
// streams of each stream's p99 ITL): a Dist over the streams.
type Spread = Dist

// Defined reports whether the population is not empty.
func (d Dist) Defined() bool { return d.N > 0 }

// At returns the chosen percentile p (or one of the fixed ones).
func (d Dist) At(p float64) (float64, bool) {
	if d.N == 0 {
		return 0, false
	}
	for _, q := range d.Q {
		if q.P == p {
			return q.V, true
		}
	}
	switch p {
	case 50:
		return d.P50, true
	case 90:
		return d.P90, true
	case 95:
		return d.P95, true
	case 99:
		return d.P99, true
	case 100:
		return d.Max, true
	}
	return 0, false
}

// PercentileKey is a percentile's JSON key and gate suffix: p50, p99.9.
func PercentileKey(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// choose returns ps, or the defaults when empty.
func choose(ps []float64) []float64 {
	if len(ps) == 0 {
		return DefaultPercentiles
	}
	return ps
}

// distOf summarizes sorted values, with the chosen percentiles ps.
func distOf(sorted []float64, ps []float64) Dist {
	if len(sorted) == 0 {
		return Dist{}
	}
	var s float64
	for _, v := range sorted {
		s += v
	}
	q := func(p float64) float64 { return quantile.Linear(sorted, p/100) }
	d := Dist{
		N:    len(sorted),
		Mean: s / float64(len(sorted)),
		Min:  sorted[0],
		P50:  q(50), P90: q(90), P95: q(95), P99: q(99),
		Max: sorted[len(sorted)-1],
	}
	for _, p := range choose(ps) {
		d.Q = append(d.Q, Quantile{P: p, V: q(p)})
	}
	return d
}

// histDist summarizes a histogram of nanoseconds in milliseconds.
func histDist(h *quantile.Histogram, ps []float64) Dist {
	if h == nil || h.N == 0 {
		return Dist{}
	}
	q := func(p float64) float64 { return ms(h.Quantile(p / 100)) }
	d := Dist{N: int(h.N), Mean: ms(h.Mean()), Min: ms(float64(h.Min)), P50: q(50), P90: q(90), P95: q(95), P99: q(99), Max: ms(float64(h.Max))}
	for _, p := range choose(ps) {
		d.Q = append(d.Q, Quantile{P: p, V: q(p)})
	}
	return d
}

// MarshalJSON writes {"n":…,"mean":…,"min":…,"pNN":…,…,"max":…}; every figure is
// null when the population is empty.
func (d Dist) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	num := func(v float64) {
		if d.N == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	b.WriteString(`{"n":`)
	b.WriteString(strconv.Itoa(d.N))
	b.WriteString(`,"mean":`)
	num(d.Mean)
	b.WriteString(`,"min":`)
	num(d.Min)
	qs := d.Q
	if len(qs) == 0 {
		for _, p := range DefaultPercentiles {
			v, _ := d.At(p)
			qs = append(qs, Quantile{P: p, V: v})
		}
	}
	for _, q := range qs {
		b.WriteString(`,"` + PercentileKey(q.P) + `":`)
		num(q.V)
	}
	b.WriteString(`,"max":`)
	num(d.Max)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and documents written
// before distributions carried "n" (a non-null mean or p50 counts as
// defined).
func (d *Dist) UnmarshalJSON(data []byte) error {
	var m map[string]*float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*d = Dist{}
	get := func(k string) float64 {
		if v := m[k]; v != nil {
			return *v
		}
		return 0
	}
	if n := m["n"]; n != nil {
		d.N = int(*n)
	} else if m["mean"] != nil || m["p50"] != nil {
		d.N = 1
	}
	d.Mean, d.Max, d.Min = get("mean"), get("max"), get("min")
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, "p")
		if !ok || v == nil {
			continue
		}
		p, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(p > 0 && p < 100) {
			continue
		}
		d.Q = append(d.Q, Quantile{P: p, V: *v})
		switch p {
		case 50:
			d.P50 = *v
		case 90:
			d.P90 = *v
		case 95:
			d.P95 = *v
		case 99:
			d.P99 = *v
		}
	}
	slices.SortFunc(d.Q, func(a, b Quantile) int { return cmp.Compare(a.P, b.P) })
	return nil
}
