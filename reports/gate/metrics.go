package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports"
)

// Metric is one figure a gate can hold.
type Metric struct {
	// Name is how --metric selects it.
	Name string
	// Doc says what it is, for --help.
	Doc string
	// Unit is "ms", "ratio" or "share" (in [0,1]).
	Unit string
	// HigherIsBetter is true for goodputs.
	HigherIsBetter bool
	// PerGap marks figures of gaps, unknown for a source that records
	// none (GuideLLM).
	PerGap bool
	// NeedsGaps marks pooled ITL, computed from every gap: only measured
	// stream files carry them; a JSON document holds per-stream rows only.
	NeedsGaps bool
	// value reads the metric from a summary; false when it is undefined
	// (an empty population).
	value func(s *reports.Summary) (float64, bool)
	// Exact marks a share of counted streams judged by Fisher's exact
	// test on the counts instead of the bootstrap (FrozenMetric).
	Exact bool
}

// Share reports whether the metric is a share, whose change is in
// percentage points rather than relative.
func (m Metric) Share() bool { return m.Unit == "share" || m.Unit == "score" }

// DefaultMetrics are held when no --metric is given: the p99 across
// streams of each stream's p99 ITL (the steady cadence of the worst
// streams), the p99 across streams of each stream's largest gap (a freeze:
// a stream's own p99 over 200 gaps ignores its two largest, so a 2 s
// freeze of every stream moves the first metric not at all), and ITL
// goodput at the run's threshold θ (400 ms by default: the share of
// streams that never froze). Together they fail a candidate in which
// streams stall, whether the stall is one gap or many.
//
// The fourth, frozen_stream_share (FrozenMetric), counts the streams that
// froze longer than the stall threshold and is judged by an exact test on
// the counts: a freeze of 3.5 % of 600 streams fails it while the
// bootstrap of the p99 of max gap reads the jump as noise.
var DefaultMetrics = []string{"stream_p99_itl_p99", "stream_max_gap_p99", "itl_goodput", FrozenMetric}

// DefaultMetric is the first of DefaultMetrics.
const DefaultMetric = "stream_p99_itl_p99"

// UnservedMetric is held by every comparison: the share of requests
// rejected or failed, so that a candidate that serves fewer requests
// cannot pass on the latencies of the few it served.
const UnservedMetric = "unserved_share"

// fixedStats are the statistics --help lists for each distribution; any
// other percentile (ttft_p99.9) is looked up by name.
var fixedStats = []string{"mean", "p50", "p90", "p95", "p99", "max"}

// popMetric builds the metric name_stat of population p.
func popMetric(name, doc, unit string, p reports.Population, stat string, perGap, needsGaps bool) (Metric, bool) {
	m := Metric{Name: name + "_" + stat, Unit: unit, PerGap: perGap, NeedsGaps: needsGaps}
	switch stat {
	case "mean":
		m.Doc = "mean of " + doc
		m.value = func(s *reports.Summary) (float64, bool) { d := s.Dist(p); return d.Mean, d.N > 0 }
	case "max":
		m.Doc = "max of " + doc
		m.value = func(s *reports.Summary) (float64, bool) { d := s.Dist(p); return d.Max, d.N > 0 }
	default:
		rest, ok := strings.CutPrefix(stat, "p")
		q, err := strconv.ParseFloat(rest, 64)
		if !ok || err != nil || !(q > 0 && q < 100) {
			return Metric{}, false
		}
		m.Doc = stat + " of " + doc
		m.value = func(s *reports.Summary) (float64, bool) { return s.Percentile(p, q) }
	}
	return m, true
}

// families are the populations whose statistics are metrics: the
// Vocabulary's rows with a gate name, under it.
var families = func() []family {
	var out []family
	for _, m := range reports.Vocabulary {
		if m.Gate != "" {
			out = append(out, family{name: m.Gate, doc: m.GateDoc, unit: m.Unit, pop: m.Pop, perGap: m.PerGap, needsGap: m.NeedsGaps})
		}
	}
	return out
}()

type family struct {
	name, doc, unit  string
	pop              reports.Population
	perGap, needsGap bool
}

// registry maps every listed metric's name to it; Names derives from it.
var registry = func() map[string]Metric {
	r := map[string]Metric{
		"itl_goodput": {Name: "itl_goodput", Doc: "share of finished streams whose largest gap is at most θ", Unit: "share", HigherIsBetter: true, PerGap: true,
			value: func(s *reports.Summary) (float64, bool) {
				return s.ITLGoodput, s.Served() > 0 && !s.GapsUnavailable
			}},
		"slo_goodput": {Name: "slo_goodput", Doc: "share of requests meeting every TTFT/TPOT/E2EL limit", Unit: "share", HigherIsBetter: true,
			value: func(s *reports.Summary) (float64, bool) { return s.SLOGoodput, s.Requests > 0 }},
		"unstable_stream_share": {Name: "unstable_stream_share", Doc: "share of streams whose p99/p50 gap ratio exceeds the jitter limit", Unit: "share", PerGap: true,
			value: func(s *reports.Summary) (float64, bool) { return s.UnstableStreamShare, s.StreamsWithGaps > 0 }},
		"stalled_stream_share": {Name: "stalled_stream_share", Doc: "share of finished streams with a gap above the stall threshold", Unit: "share", PerGap: true,
			value: func(s *reports.Summary) (float64, bool) { return s.StalledStreamShare, s.Served() > 0 }},
		FrozenMetric: {Name: FrozenMetric, Doc: "share of served streams whose largest gap exceeds the stall threshold (Fisher's exact test)", Unit: "share", PerGap: true, Exact: true,
			value: func(s *reports.Summary) (float64, bool) { return math.NaN(), s.Served() > 0 }},
		UnservedMetric: {Name: UnservedMetric, Doc: "share of requests rejected or failed (held by every comparison)", Unit: "share",
			value: func(s *reports.Summary) (float64, bool) { return s.Unserved() }},
		"qoe_below_share": {Name: "qoe_below_share", Doc: "share of scored streams whose QoE is below 0.9", Unit: "share",
			value: func(s *reports.Summary) (float64, bool) { return s.QoE.BelowShare, s.QoE.N > 0 }},
	}
	for _, f := range families {
		for _, stat := range fixedStats {
			m, _ := popMetric(f.name, f.doc, f.unit, f.pop, stat, f.perGap, f.needsGap)
			m.HigherIsBetter = f.unit == "score"
			r[m.Name] = m
		}
	}
	return r
}()

// Names lists every metric's name, sorted.
func Names() []string {
	var out []string
	for k := range registry {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Lookup finds a metric by name: a listed one, or any percentile of a
// distribution (ttft_p99.9, stream_max_gap_p75).
func Lookup(name string) (Metric, error) {
	if m, ok := registry[name]; ok {
		return m, nil
	}
	for _, f := range families {
		if stat, ok := strings.CutPrefix(name, f.name+"_"); ok {
			if m, ok := popMetric(f.name, f.doc, f.unit, f.pop, stat, f.perGap, f.needsGap); ok {
				m.HigherIsBetter = f.unit == "score"
				return m, nil
			}
		}
	}
	return Metric{}, fmt.Errorf("unknown metric %q: must be one of %s, or any percentile of a distribution (ttft_p99.9)", name, strings.Join(Names(), ", "))
}

// Help lists every metric with what it is, one per line, for --help.
func Help() string {
	var b strings.Builder
	for _, n := range Names() {
		m := registry[n]
		better := "lower is better"
		if m.HigherIsBetter {
			better = "higher is better"
		}
		fmt.Fprintf(&b, "  %-24s %s (%s, %s)\n", n, m.Doc, m.Unit, better)
	}
	return b.String()
}
