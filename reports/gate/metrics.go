package gate

import (
	"fmt"
	"slices"
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
	// value reads the metric from a summary.
	value func(s *reports.Summary) float64
}

// Share reports whether the metric is a share, whose change is in
// percentage points rather than relative.
func (m Metric) Share() bool { return m.Unit == "share" }

// DefaultMetric is the p99 across streams of each stream's p99 ITL.
const DefaultMetric = "stream_p99_itl_p99"

func dist(name, doc string, d func(s *reports.Summary) reports.Dist, gaps bool) map[string]Metric {
	out := map[string]Metric{}
	for _, q := range []struct {
		key string
		get func(reports.Dist) float64
	}{
		{"mean", func(d reports.Dist) float64 { return d.Mean }}, {"p50", func(d reports.Dist) float64 { return d.P50 }},
		{"p90", func(d reports.Dist) float64 { return d.P90 }}, {"p99", func(d reports.Dist) float64 { return d.P99 }},
		{"max", func(d reports.Dist) float64 { return d.Max }},
	} {
		out[name+"_"+q.key] = Metric{Name: name + "_" + q.key, Doc: q.key + " of " + doc, Unit: "ms", NeedsGaps: gaps, PerGap: gaps,
			value: func(s *reports.Summary) float64 { return q.get(d(s)) }}
	}
	return out
}

func spread(name, doc, unit string, sp func(s *reports.Summary) reports.Spread) map[string]Metric {
	out := map[string]Metric{}
	for _, q := range []struct {
		key string
		get func(reports.Spread) float64
	}{
		{"p50", func(d reports.Spread) float64 { return d.P50 }}, {"p90", func(d reports.Spread) float64 { return d.P90 }},
		{"p99", func(d reports.Spread) float64 { return d.P99 }}, {"max", func(d reports.Spread) float64 { return d.Max }},
	} {
		out[name+"_"+q.key] = Metric{Name: name + "_" + q.key, Doc: q.key + " across streams of " + doc, Unit: unit, PerGap: true,
			value: func(s *reports.Summary) float64 { return q.get(sp(s)) }}
	}
	return out
}

// registry maps every metric's name to it; Names derives from it.
var registry = func() map[string]Metric {
	r := map[string]Metric{
		"itl_goodput": {Name: "itl_goodput", Doc: "share of finished streams whose largest gap is at most θ", Unit: "share", HigherIsBetter: true, PerGap: true,
			value: func(s *reports.Summary) float64 { return s.ITLGoodput }},
		"slo_goodput": {Name: "slo_goodput", Doc: "share of requests meeting every TTFT/TPOT/E2EL limit", Unit: "share", HigherIsBetter: true,
			value: func(s *reports.Summary) float64 { return s.SLOGoodput }},
		"unstable_stream_share": {Name: "unstable_stream_share", Doc: "share of streams whose p99/p50 gap ratio exceeds the jitter limit", Unit: "share", PerGap: true,
			value: func(s *reports.Summary) float64 { return s.UnstableStreamShare }},
		"stalled_stream_share": {Name: "stalled_stream_share", Doc: "share of finished streams with a gap above the stall threshold", Unit: "share", PerGap: true,
			value: func(s *reports.Summary) float64 { return s.StalledStreamShare }},
	}
	for _, m := range []map[string]Metric{
		spread("stream_p99_itl", "each stream's p99 ITL", "ms", func(s *reports.Summary) reports.Spread { return s.StreamP99ITL }),
		spread("stream_p50_itl", "each stream's median ITL", "ms", func(s *reports.Summary) reports.Spread { return s.StreamP50ITL }),
		spread("stream_max_gap", "each stream's largest gap", "ms", func(s *reports.Summary) reports.Spread { return s.StreamMaxGap }),
		spread("stream_jitter", "each stream's p99/p50 gap ratio", "ratio", func(s *reports.Summary) reports.Spread { return s.StreamJitter }),
		dist("ttft", "TTFT", func(s *reports.Summary) reports.Dist { return s.TTFT }, false),
		dist("tpot", "TPOT", func(s *reports.Summary) reports.Dist { return s.TPOT }, false),
		dist("e2el", "E2EL", func(s *reports.Summary) reports.Dist { return s.E2EL }, false),
		dist("itl_pooled", "every gap of every stream (vLLM's ITL; needs stream files)", func(s *reports.Summary) reports.Dist { return s.ITLPooled }, true),
	} {
		for k, v := range m {
			r[k] = v
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

// Lookup finds a metric by name.
func Lookup(name string) (Metric, error) {
	if m, ok := registry[name]; ok {
		return m, nil
	}
	return Metric{}, fmt.Errorf("unknown metric %q: must be one of %s", name, strings.Join(Names(), ", "))
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
