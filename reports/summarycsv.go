package reports

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"github.com/itlsim/itlsim/sim"
)

// summaryColumn is one column of the summary CSV: its name (the JSON
// summary's key, with the statistic after an underscore for a
// distribution: ttft_ms_p99) and its cell; ok false leaves the cell empty
// (a figure the run cannot have, shown n/a in the table).
type summaryColumn struct {
	name string
	cell func(s *Summary) (v float64, ok bool)
}

func always(f func(s *Summary) float64) func(s *Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) { return f(s), true }
}

func withGaps(f func(s *Summary) float64) func(s *Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) { return f(s), !s.GapsUnavailable }
}

func serverSide(f func(s *Summary) float64) func(s *Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) { return f(s), !s.Measured }
}

// csvPercentiles are the percentiles of the summary CSV's distribution
// columns: p50, p90 and p99 (always there, for the readers of earlier
// files) and every percentile a run chose (metrics.percentiles), in
// increasing order.
func csvPercentiles(runs []Run) []float64 {
	ps := []float64{50, 90, 99}
	for i := range runs {
		for _, p := range runs[i].Config.Metrics.Percentiles {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	slices.Sort(ps)
	return ps
}

func summaryColumns(ps []float64) []summaryColumn {
	cols := []summaryColumn{
		{"requests", always(func(s *Summary) float64 { return float64(s.Requests) })},
		{"finished", always(func(s *Summary) float64 { return float64(s.Finished) })},
		{"rejected", always(func(s *Summary) float64 { return float64(s.Rejected) })},
		{"failed", always(func(s *Summary) float64 { return float64(s.Failed) })},
		{"input_tokens", always(func(s *Summary) float64 { return float64(s.InputTokens) })},
		{"output_tokens", always(func(s *Summary) float64 { return float64(s.OutputTokens) })},
		{"duration_s", always(func(s *Summary) float64 { return s.DurationS })},
		{"requests_per_s", always(func(s *Summary) float64 { return s.RequestsPerS })},
		{"input_tokens_per_s", always(func(s *Summary) float64 { return s.InputTokensPerS })},
		{"output_tokens_per_s", always(func(s *Summary) float64 { return s.OutputTokensPerS })},
	}
	type stat struct {
		key string
		f   func(d Dist) float64
	}
	var stats []stat
	for _, p := range ps {
		stats = append(stats, stat{PercentileKey(p), func(d Dist) float64 { v, _ := d.At(p); return v }})
	}
	stats = append(stats, stat{"max", func(d Dist) float64 { return d.Max }})
	dist := func(name string, get func(s *Summary) Dist, wrap func(func(*Summary) float64) func(*Summary) (float64, bool)) {
		all := append([]stat{{"mean", func(d Dist) float64 { return d.Mean }}}, stats...)
		for _, st := range all {
			cols = append(cols, summaryColumn{name + "_" + st.key, wrap(func(s *Summary) float64 { return st.f(get(s)) })})
		}
	}
	spread := func(name string, get func(s *Summary) Spread, wrap func(func(*Summary) float64) func(*Summary) (float64, bool)) {
		for _, st := range stats {
			cols = append(cols, summaryColumn{name + "_" + st.key, wrap(func(s *Summary) float64 { return st.f(get(s)) })})
		}
	}
	// The Vocabulary's populations, in its order: a per-gap one is an
	// empty cell for a source without gaps.
	for _, m := range Vocabulary {
		if !m.CSV {
			continue
		}
		wrap := always
		if m.PerGap {
			wrap = withGaps
		}
		if m.Shape == ShapeSpread {
			spread(m.JSON, m.Dist, wrap)
		} else {
			dist(m.JSON, m.Dist, wrap)
		}
	}
	cols = append(cols,
		summaryColumn{"unstable_stream_share", withGaps(func(s *Summary) float64 { return s.UnstableStreamShare })},
		summaryColumn{"itl_goodput", withGaps(func(s *Summary) float64 { return s.ITLGoodput })},
		summaryColumn{"itl_goodput_threshold_ms", always(func(s *Summary) float64 { return s.ITLGoodputMS })},
		summaryColumn{"slo_goodput", always(func(s *Summary) float64 { return s.SLOGoodput })},
		summaryColumn{"slo_goodput_per_s", always(func(s *Summary) float64 { return s.SLOGoodputPerS })},
		summaryColumn{"preemptions_recompute", serverSide(func(s *Summary) float64 { return float64(s.Preemptions.Recompute) })},
		summaryColumn{"preemptions_swap", serverSide(func(s *Summary) float64 { return float64(s.Preemptions.Swap) })},
		summaryColumn{"preempted_stream_share", serverSide(func(s *Summary) float64 { return s.PreemptedShare })},
		summaryColumn{"prefix_cache_hit_rate", serverSide(func(s *Summary) float64 { return s.PrefixCacheHitRate })},
		summaryColumn{"stalls", withGaps(func(s *Summary) float64 { return float64(s.Stalls) })},
		summaryColumn{"stalled_stream_share", withGaps(func(s *Summary) float64 { return s.StalledStreamShare })},
		summaryColumn{"stall_threshold_ms", always(func(s *Summary) float64 { return s.StallThresholdMS })},
	)
	for _, c := range sim.Causes() {
		name := c.String()
		cols = append(cols, summaryColumn{"stall_ms_" + name, serverSide(func(s *Summary) float64 { return s.StallMSByCause[name] })})
	}
	return cols
}

// WriteSummaryCSV writes one row per run: its name, then the summary's
// figures in the columns the JSON names them (a distribution's statistics
// as KEY_mean, KEY_p50, KEY_p90, KEY_p99 and each percentile the runs chose, …; stall time by cause as stall_ms_CAUSE). A figure
// the run cannot have — server-side figures of a measured run, gap figures
// of a file without gaps — is an empty cell.
func WriteSummaryCSV(w io.Writer, runs []Run) error {
	cols := summaryColumns(csvPercentiles(runs))
	cw := csv.NewWriter(w)
	header := []string{"run"}
	for _, c := range cols {
		header = append(header, c.name)
	}
	_ = cw.Write(header)
	for i := range runs {
		s := &runs[i].Summary
		row := []string{runs[i].Name}
		for _, c := range cols {
			v, ok := c.cell(s)
			if !ok {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatFloat(finite(v), 'g', -1, 64))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
