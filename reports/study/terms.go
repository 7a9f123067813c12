package study

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports"
)

// Term is one SLO term over a run's measured figures, in the --slo
// syntax: a population term METRIC:STAT<=LIMIT (or >=), such as
// stream-p99-itl:p99<=200ms, ttft:p95<=500ms or
// tokens-per-s-per-user:p10>=20/s; or a share term itl-goodput>=99%,
// slo-goodput>=90%, unstable<=5%.
type Term struct {
	Text   string
	metric string
	stat   string
	atMost bool
	limit  float64 // ms, tokens/s or a share in [0,1]
	at     float64 // itl-goodput's θ in ms (0: the scenario's)
}

// Terms is a list of terms; it is a Condition.
type Terms []Term

var _ Condition = Terms(nil)

// termMetrics are the population metrics and the statistics each has.
var termMetrics = map[string][]string{
	"ttft":                  {"mean", "p50", "p90", "p95", "p99", "max"},
	"tpot":                  {"mean", "p50", "p90", "p99", "max"},
	"e2el":                  {"mean", "p50", "p90", "p99", "max"},
	"itl":                   {"mean", "p50", "p90", "p99", "max"},
	"stream-p99-itl":        {"p50", "p90", "p99", "max"},
	"stream-max-gap":        {"p50", "p90", "p99", "max"},
	"jitter":                {"p50", "p90", "p99", "max"},
	"tokens-per-s-per-user": {"mean", "p10"},
}

var shareMetrics = map[string]bool{"itl-goodput": true, "slo-goodput": true, "unstable": true}

// ParseTerms parses --slo values.
func ParseTerms(vals []string) (Terms, error) {
	var out Terms
	for _, v := range vals {
		t, err := ParseTerm(v)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// ParseTerm parses one term; errors say what was expected.
func ParseTerm(s string) (Term, error) {
	text := strings.TrimSpace(s)
	t := Term{Text: strings.ReplaceAll(text, " ", "")}
	op := "<="
	i := strings.Index(t.Text, "<=")
	if i < 0 {
		op, i = ">=", strings.Index(t.Text, ">=")
	}
	if i < 0 {
		return t, fmt.Errorf("--slo %q: expected METRIC:STAT<=LIMIT (e.g. stream-p99-itl:p99<=200ms) or a share term (itl-goodput>=99%%)", s)
	}
	t.atMost = op == "<="
	lhs, rhs := t.Text[:i], t.Text[i+2:]
	metric, stat, hasStat := strings.Cut(lhs, ":")
	t.metric, t.stat = metric, stat
	if shareMetrics[metric] {
		if hasStat {
			return t, fmt.Errorf("--slo %q: %s is a share term: %s>=99%%", s, metric, metric)
		}
		lim, at, hasAt := strings.Cut(rhs, "@")
		if hasAt {
			if metric != "itl-goodput" {
				return t, fmt.Errorf("--slo %q: only itl-goodput takes @THRESHOLD", s)
			}
			v, err := parseLimit(at, "ms")
			if err != nil || v <= 0 {
				return t, fmt.Errorf("--slo %q: @%s: expected a threshold in ms or s (@400ms)", s, at)
			}
			t.at = v
		}
		v, err := parseLimit(lim, "%")
		if err != nil || v < 0 || v > 1 {
			return t, fmt.Errorf("--slo %q: expected a share such as 99%% or 0.99, got %q", s, lim)
		}
		t.limit = v
		return t, nil
	}
	stats, ok := termMetrics[metric]
	if !ok {
		return t, fmt.Errorf("--slo %q: unknown metric %q; expected one of %s, itl-goodput, slo-goodput, unstable", s, metric, strings.Join(metricNames(), ", "))
	}
	if !hasStat {
		return t, fmt.Errorf("--slo %q: %s needs a statistic: %s:%s<=LIMIT", s, metric, metric, stats[len(stats)-1])
	}
	found := false
	for _, st := range stats {
		found = found || st == stat
	}
	if !found {
		return t, fmt.Errorf("--slo %q: %s has no statistic %q; expected one of %s", s, metric, stat, strings.Join(stats, ", "))
	}
	unit := "ms"
	switch metric {
	case "tokens-per-s-per-user":
		unit = "/s"
	case "jitter":
		unit = ""
	}
	v, err := parseLimit(rhs, unit)
	if err != nil {
		return t, fmt.Errorf("--slo %q: %v", s, err)
	}
	t.limit = v
	return t, nil
}

func metricNames() []string {
	return []string{"ttft", "tpot", "e2el", "itl", "stream-p99-itl", "stream-max-gap", "jitter", "tokens-per-s-per-user"}
}

// parseLimit reads a number with its unit: for "ms" a time (200ms, 3s,
// or a bare number of ms); for "/s" a rate (20/s or 20); for "%" a share
// (99% or 0.99); "" a bare number.
func parseLimit(s, unit string) (float64, error) {
	num, scale := s, 1.0
	switch unit {
	case "ms":
		switch {
		case strings.HasSuffix(s, "ms"):
			num = strings.TrimSuffix(s, "ms")
		case strings.HasSuffix(s, "s"):
			num, scale = strings.TrimSuffix(s, "s"), 1000
		}
	case "/s":
		num = strings.TrimSuffix(s, "/s")
	case "%":
		if strings.HasSuffix(s, "%") {
			num, scale = strings.TrimSuffix(s, "%"), 0.01
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		want := map[string]string{"ms": "a time such as 200ms or 3s", "/s": "a rate such as 20/s", "%": "a share such as 99%", "": "a number"}[unit]
		return 0, fmt.Errorf("expected %s, got %q", want, s)
	}
	return v * scale, nil
}

// Evaluate judges every term on m.
func (ts Terms) Evaluate(m *Metrics) []Outcome {
	out := make([]Outcome, len(ts))
	for i, t := range ts {
		v := t.value(m)
		o := Outcome{Term: t.Text, Value: sig6(v), Limit: t.limit}
		if t.atMost {
			o.Pass = v <= t.limit
			if t.limit > 0 {
				o.Margin = (t.limit - v) / t.limit
			} else if !o.Pass {
				o.Margin = -1
			}
		} else {
			o.Pass = v >= t.limit
			if t.limit > 0 {
				o.Margin = (v - t.limit) / t.limit
			}
		}
		o.Margin = sig6(o.Margin)
		out[i] = o
	}
	return out
}

func (t Term) value(m *Metrics) float64 {
	s := &m.Summary
	switch t.metric {
	case "itl-goodput":
		return s.ITLGoodput // at t.at: the caller sets metrics.itl_goodput_ms (ITLGoodputThreshold)
	case "slo-goodput":
		return s.SLOGoodput
	case "unstable":
		return s.UnstableStreamShare
	case "tokens-per-s-per-user":
		if t.stat == "p10" {
			return m.TokensPerSPerUser.P10
		}
		return m.TokensPerSPerUser.Mean
	case "ttft":
		if t.stat == "p95" {
			return m.TTFTP95
		}
		return distStat(s.TTFT, t.stat)
	case "tpot":
		return distStat(s.TPOT, t.stat)
	case "e2el":
		return distStat(s.E2EL, t.stat)
	case "itl":
		return distStat(s.ITLPooled, t.stat)
	case "stream-p99-itl":
		return spreadStat(s.StreamP99ITL, t.stat)
	case "stream-max-gap":
		return spreadStat(s.StreamMaxGap, t.stat)
	case "jitter":
		return spreadStat(s.StreamJitter, t.stat)
	}
	panic("study: term of unknown metric " + t.metric)
}

func distStat(d reports.Dist, stat string) float64 {
	switch stat {
	case "mean":
		return d.Mean
	case "p50":
		return d.P50
	case "p90":
		return d.P90
	case "p99":
		return d.P99
	}
	return d.Max
}

func spreadStat(d reports.Spread, stat string) float64 {
	switch stat {
	case "p50":
		return d.P50
	case "p90":
		return d.P90
	case "p99":
		return d.P99
	}
	return d.Max
}

// ITLGoodputThreshold is the θ (ms) an itl-goodput term names, 0 when none
// does; the caller sets metrics.itl_goodput_ms to it so the summary's ITL
// goodput is measured at that threshold.
func (ts Terms) ITLGoodputThreshold() (float64, error) {
	var at float64
	for _, t := range ts {
		if t.at == 0 {
			continue
		}
		if at != 0 && at != t.at {
			return 0, fmt.Errorf("--slo %s: a second itl-goodput threshold (%g ms and %g ms); give one", t.Text, at, t.at)
		}
		at = t.at
	}
	return at, nil
}
