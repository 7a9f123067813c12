package slo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/itlsim/itlsim/reports"
)

// Outcome is one term judged on a run: the JSON contract's runs[].slo[].
type Outcome = reports.SLOOutcome

// Kind is what a metric measures, which fixes its limit's unit.
type Kind int

// Kinds.
const (
	Time  Kind = iota // ms; limits take a unit: 200ms, 3s
	Ratio             // a plain number (jitter)
	Score             // in [0, 1]: 0.9 or 90%
	Rate              // tokens/s: 20/s
	Share             // in [0, 1]: 99% or 0.99
)

func (k Kind) unit() string {
	switch k {
	case Time:
		return "ms"
	case Ratio:
		return "ratio"
	case Score:
		return "score"
	case Rate:
		return "tokens/s"
	}
	return "share"
}

// metric is one population a term can name.
type metric struct {
	pop  reports.Population
	kind Kind
	doc  string
}

// metrics maps population metric names to them: the Vocabulary's rows
// with a term name.
var metrics = func() map[string]metric {
	kinds := map[string]Kind{"ms": Time, "ratio": Ratio, "score": Score, "tokens/s": Rate}
	out := map[string]metric{}
	for _, m := range reports.Vocabulary {
		if m.Term != "" {
			out[m.Term] = metric{m.Pop, kinds[m.Unit], m.Doc}
		}
	}
	return out
}()

// shares are the share terms' names.
var shares = map[string]string{
	"itl-goodput": "share of finished streams whose largest gap is at most @θ (the run's θ without @)",
	"slo-goodput": "share of requests meeting every per-request limit",
	"unstable":    "share of streams whose p99/p50 gap ratio exceeds the jitter limit",
}

// Metrics lists the metric names terms accept, population metrics first.
func Metrics() []string {
	var out []string
	for _, m := range reports.Vocabulary {
		if m.Term != "" {
			out = append(out, m.Term)
		}
	}
	return append(out, "itl-goodput", "slo-goodput", "unstable")
}

// Term is one parsed SLO term.
type Term struct {
	// Text is the term as written (trimmed).
	Text string
	// Metric is the metric's name (Metrics).
	Metric string
	// Stat is mean, min, max or a percentile (P) for a population term;
	// "" for a share term.
	Stat string
	P    float64
	// AtMost is true for <=, false for >=.
	AtMost bool
	// Limit is in the metric's unit: ms, tokens/s, a fraction or a ratio.
	Limit float64
	// ThetaMS is the threshold of itl-goodput@θ; 0: the run's.
	ThetaMS float64
	kind    Kind
	pop     reports.Population
}

// Population is the per-stream population the term reads from a summary:
// its metric's, or for itl-goodput at a threshold of its own each
// stream's largest gap; false for the shares a summary holds as counts
// (itl-goodput at the run's threshold, slo-goodput, unstable).
func (t Term) Population() (reports.Population, bool) {
	switch {
	case t.kind != Share:
		return t.pop, true
	case t.Metric == "itl-goodput" && t.ThetaMS != 0:
		return reports.PopStreamMaxGap, true
	}
	return 0, false
}

// Unit is the term's unit: ms, tokens/s, share, score or ratio.
func (t Term) Unit() string { return t.kind.unit() }

// Parse reads one term.
func Parse(s string) (Term, error) {
	text := strings.TrimSpace(s)
	t := Term{Text: text}
	bad := func(format string, a ...any) (Term, error) {
		return Term{}, fmt.Errorf("SLO term %q: %s", text, fmt.Sprintf(format, a...))
	}
	var lhs, rhs string
	switch {
	case strings.Contains(text, "<="):
		lhs, rhs, _ = strings.Cut(text, "<=")
		t.AtMost = true
	case strings.Contains(text, ">="):
		lhs, rhs, _ = strings.Cut(text, ">=")
	default:
		return bad("expected METRIC:STAT<=LIMIT or METRIC:STAT>=LIMIT (ttft:p95<=200ms), or a share (itl-goodput>=99%%@400ms)")
	}
	lhs, rhs = strings.TrimSpace(strings.ToLower(lhs)), strings.TrimSpace(rhs)
	name, stat, hasStat := strings.Cut(lhs, ":")
	name = strings.TrimSpace(name)
	if _, ok := shares[name]; ok {
		if hasStat {
			return bad("%s is a share: write %s>=99%% without a statistic", name, name)
		}
		t.Metric, t.kind = name, Share
		if at, theta, ok := strings.Cut(rhs, "@"); ok {
			if name != "itl-goodput" {
				return bad("only itl-goodput takes @THRESHOLD")
			}
			v, err := parseTime(theta)
			if err != nil || !(v > 0) {
				return bad("threshold %q: expected a time such as 400ms", theta)
			}
			t.ThetaMS, rhs = v, at
		}
		v, err := parseShare(rhs)
		if err != nil {
			return bad("limit %q: %v", rhs, err)
		}
		t.Limit = v
		return t, nil
	}
	m, ok := metrics[name]
	if !ok {
		return bad("unknown metric %q; valid: %s", name, strings.Join(Metrics(), ", "))
	}
	if !hasStat {
		return bad("%s is a population: name a statistic, e.g. %s:p99 (mean, min, max or pNN)", name, name)
	}
	t.Metric, t.kind, t.pop = name, m.kind, m.pop
	stat = strings.TrimSpace(stat)
	switch stat {
	case "mean", "min", "max":
		t.Stat = stat
	default:
		q, err := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
		if !strings.HasPrefix(stat, "p") || err != nil || !(q > 0 && q < 100) {
			return bad("statistic %q: expected mean, min, max or a percentile pNN in (0, 100) such as p95 or p99.9", stat)
		}
		t.Stat, t.P = stat, q
	}
	if strings.Contains(rhs, "@") {
		return bad("@THRESHOLD belongs to itl-goodput only")
	}
	var err error
	switch m.kind {
	case Time:
		t.Limit, err = parseTime(rhs)
	case Rate:
		t.Limit, err = parseRate(rhs)
	case Score:
		t.Limit, err = parseShare(rhs)
	default:
		t.Limit, err = parseNumber(rhs)
	}
	if err != nil {
		return bad("limit %q: %v", rhs, err)
	}
	return t, nil
}

// ParseAll reads several terms; the error names every bad one.
func ParseAll(ss []string) ([]Term, error) {
	var out []Term
	var errs []error
	for _, s := range ss {
		t, err := Parse(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, errors.New("expected a number ≥ 0")
	}
	return v, nil
}

// parseTime reads a time with a unit (200ms, 3s, 1.5s, 500us) into ms.
func parseTime(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, errors.New("a time needs a unit: 200ms, 3s")
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("expected a time with a unit such as 200ms or 3s")
	}
	return float64(d) / 1e6, nil
}

// parseRate reads tokens/s: 20/s, 20 (per second) or 1200/min.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	scale := 1.0
	switch {
	case strings.HasSuffix(s, "/s"):
		s = strings.TrimSuffix(s, "/s")
	case strings.HasSuffix(s, "/min"):
		s, scale = strings.TrimSuffix(s, "/min"), 1.0/60
	}
	v, err := parseNumber(s)
	if err != nil {
		return 0, errors.New("expected a rate such as 20/s")
	}
	return v * scale, nil
}

// parseShare reads 99%, 99.5% or 0.99 into a fraction in [0, 1].
func parseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSuffix(s, "%"), 0.01
	}
	v, err := parseNumber(s)
	if err != nil || v*scale > 1 {
		return 0, errors.New("expected a share such as 99% or 0.99")
	}
	return v * scale, nil
}

// Value is the term's metric on s; false when undefined, with why.
func (t Term) Value(s *reports.Summary) (float64, bool, string) {
	empty := "an empty population"
	switch t.Metric {
	case "itl-goodput":
		theta := t.ThetaMS
		if theta == 0 {
			theta = s.ITLGoodputMS
		}
		v, ok := s.ITLGoodputAt(theta)
		return v, ok, "no finished stream with recorded gaps"
	case "slo-goodput":
		return s.SLOGoodput, s.Requests > 0, "no requests"
	case "unstable":
		return s.UnstableStreamShare, s.StreamsWithGaps > 0 && !s.GapsUnavailable, "no stream with gaps"
	}
	if s.GapsUnavailable && (t.pop == reports.PopITL || t.pop == reports.PopStreamP99ITL || t.pop == reports.PopStreamMaxGap || t.pop == reports.PopJitter) {
		return 0, false, "the source recorded no gaps"
	}
	d := s.Dist(t.pop)
	if d.N == 0 {
		switch t.pop {
		case reports.PopTTFT, reports.PopE2EL:
			empty = "no finished stream"
		case reports.PopTPOT, reports.PopTokensPerSPerUser:
			empty = "no finished stream of two tokens or more"
		case reports.PopQoE, reports.PopFluidity:
			empty = "no scored stream"
		default:
			empty = "no stream with gaps"
		}
		return 0, false, empty
	}
	switch t.Stat {
	case "mean":
		return d.Mean, true, ""
	case "max":
		return d.Max, true, ""
	case "min":
		v, ok := s.Percentile(t.pop, 0)
		return v, ok, "the minimum is not kept in a summary read back from JSON"
	}
	v, ok := s.Percentile(t.pop, t.P)
	return v, ok, t.Stat + " is not among the summary's percentiles (a summary read back from JSON keeps only those)"
}

// Evaluate judges every term on s. An undefined value fails its term.
func Evaluate(terms []Term, s *reports.Summary) []Outcome {
	out := make([]Outcome, 0, len(terms))
	for _, t := range terms {
		o := Outcome{Term: t.Text, Unit: t.Unit(), Limit: t.Limit}
		v, ok, why := t.Value(s)
		if !ok {
			o.Note = why
			out = append(out, o)
			continue
		}
		margin := t.Limit - v
		if !t.AtMost {
			margin = v - t.Limit
		}
		o.Value, o.Margin, o.Pass = &v, &margin, margin >= 0
		out = append(out, o)
	}
	return out
}

// Pass reports whether every outcome passed.
func Pass(os []Outcome) bool {
	for _, o := range os {
		if !o.Pass {
			return false
		}
	}
	return true
}

// Limiting returns the index of the term that limits: an undefined one
// first, else the one with the smallest margin relative to its limit
// (the worst failure, or the closest to failing); -1 without outcomes.
func Limiting(os []Outcome) int {
	best, bestRel := -1, math.Inf(1)
	for i, o := range os {
		if o.Value == nil {
			return i
		}
		rel := *o.Margin / max(math.Abs(o.Limit), 1e-12)
		if rel < bestRel {
			best, bestRel = i, rel
		}
	}
	return best
}
