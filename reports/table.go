package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/sim"
)

// Format is a stdout form.
type Format string

// Formats for tables.
const (
	FormatTable    Format = "table"
	FormatMarkdown Format = "markdown"
	FormatJSON     Format = "json"
)

func f1(v float64) string  { return strconv.FormatFloat(finite(v), 'f', 1, 64) }
func f2(v float64) string  { return strconv.FormatFloat(finite(v), 'f', 2, 64) }
func pct(v float64) string { return strconv.FormatFloat(finite(v)*100, 'f', 1, 64) + "%" }

// row is one line of the comparison table: a label and one cell per run.
type row struct {
	label string
	cell  func(s *Summary) string
}

func section(title string) row { return row{label: title} }

func summaryRows(runs []Run) []row {
	thr := 400.0
	stall := 250.0
	jit := 5.0
	if len(runs) > 0 {
		thr = runs[0].Summary.ITLGoodputMS
		stall = runs[0].Summary.StallThresholdMS
		jit = runs[0].Config.Metrics.UnstableJitter
	}
	rows := []row{
		section("REQUESTS"),
		{"finished / arrived", func(s *Summary) string {
			if s.Failed > 0 {
				return fmt.Sprintf("%d / %d (%d failed)", s.Finished, s.Requests, s.Failed)
			}
			return fmt.Sprintf("%d / %d", s.Finished, s.Requests)
		}},
		{"rejected", func(s *Summary) string { return strconv.Itoa(s.Rejected) }},
		{"duration s", func(s *Summary) string { return f1(s.DurationS) }},
		{"requests/s", func(s *Summary) string { return f2(s.RequestsPerS) }},
		{"output tokens/s", func(s *Summary) string { return f1(s.OutputTokensPerS) }},
		section("LATENCY ms: mean/p50/p99"),
		{"TTFT", func(s *Summary) string { return dist3(s.TTFT) }},
		{"TPOT", func(s *Summary) string { return dist3(s.TPOT) }},
		{"E2EL", func(s *Summary) string { return dist3(s.E2EL) }},
		{"ITL pooled (vLLM)", gapCell(func(s *Summary) string { return dist3(s.ITLPooled) })},
		section("PER STREAM ms: p50/p90/p99/max"),
		{"stream p99 ITL", gapCell(func(s *Summary) string { return spread4(s.StreamP99ITL) })},
		{"stream max gap", gapCell(func(s *Summary) string { return spread4(s.StreamMaxGap) })},
		{"jitter ratio p99/p50", gapCell(func(s *Summary) string { return spread4(s.StreamJitter) })},
		{fmt.Sprintf("unstable (jitter > %g)", jit), gapCell(func(s *Summary) string { return pct(s.UnstableStreamShare) })},
		{fmt.Sprintf("ITL goodput (max gap ≤ %g ms)", thr), gapCell(func(s *Summary) string { return pct(s.ITLGoodput) })},
		{"SLO goodput", func(s *Summary) string { return pct(s.SLOGoodput) }},
		section("KV CACHE"),
		{"preemptions recompute / swap", serverCell(func(s *Summary) string {
			return fmt.Sprintf("%d / %d", s.Preemptions.Recompute, s.Preemptions.Swap)
		})},
		{"preempted streams", serverCell(func(s *Summary) string { return pct(s.PreemptedShare) })},
		{"prefix cache hit rate", serverCell(func(s *Summary) string { return pct(s.PrefixCacheHitRate) })},
	}
	anySpec := false
	for i := range runs {
		anySpec = anySpec || runs[i].Summary.Spec != nil
	}
	if anySpec {
		spec := func(f func(*SpecSummary) string) func(*Summary) string {
			return func(s *Summary) string {
				if s.Spec == nil {
					return "off"
				}
				return f(s.Spec)
			}
		}
		rows = append(rows,
			section("SPECULATIVE DECODING"),
			row{"method, k", spec(func(p *SpecSummary) string { return fmt.Sprintf("%s, %d", p.Method, p.K) })},
			row{"acceptance rate", spec(func(p *SpecSummary) string { return pct(p.AcceptanceRate) })},
			row{"mean acceptance length", spec(func(p *SpecSummary) string { return f2(p.MeanAcceptanceLength) })},
			row{"tokens per step", spec(func(p *SpecSummary) string { return f2(p.TokensPerStep) })},
			row{"fallback streams", spec(func(p *SpecSummary) string { return strconv.Itoa(p.FallbackStreams) })},
			row{"ITL per token", func(s *Summary) string { return dist3(s.ITLPerToken) }},
		)
	}
	var classNames []string
	for i := range runs {
		for name := range runs[i].Summary.ByClass {
			if !slices.Contains(classNames, name) {
				classNames = append(classNames, name)
			}
		}
	}
	slices.Sort(classNames)
	if len(classNames) > 0 {
		rows = append(rows, section("BY CLASS: n, TTFT p99, ITL p99, SLO"))
		for _, name := range classNames {
			rows = append(rows, row{name, func(s *Summary) string {
				c := s.ByClass[name]
				if c == nil {
					return "-"
				}
				return fmt.Sprintf("%d, %s, %s, %s", c.Requests, f1(c.TTFT.P99), f1(c.StreamP99ITL.P99), pct(c.SLOGoodput))
			}})
		}
	}
	anyDelivery := false
	for i := range runs {
		anyDelivery = anyDelivery || runs[i].Summary.Delivery != nil
	}
	if anyDelivery {
		srv := func(f func(*Summary) string) func(*Summary) string {
			return func(s *Summary) string {
				if s.Server == nil {
					return "-"
				}
				return f(s.Server)
			}
		}
		del := func(f func(*DeliverySummary) string) func(*Summary) string {
			return func(s *Summary) string {
				if s.Delivery == nil {
					return "off"
				}
				return f(s.Delivery)
			}
		}
		rows = append(rows,
			section("DELIVERY (rows above: client view)"),
			row{"server finished / cancelled", srv(func(s *Summary) string {
				return fmt.Sprintf("%d / %d", s.Finished, s.Cancelled)
			})},
			row{"server TTFT", srv(func(s *Summary) string { return dist3(s.TTFT) })},
			row{"server TPOT", srv(func(s *Summary) string { return dist3(s.TPOT) })},
			row{"server E2EL", srv(func(s *Summary) string { return dist3(s.E2EL) })},
			row{"server ITL pooled", srv(func(s *Summary) string { return dist3(s.ITLPooled) })},
			row{"server stream p99 ITL", srv(func(s *Summary) string { return spread4(s.StreamP99ITL) })},
			row{"server stream max gap", srv(func(s *Summary) string { return spread4(s.StreamMaxGap) })},
			row{"server jitter ratio", srv(func(s *Summary) string { return spread4(s.StreamJitter) })},
			row{"server unstable / ITL goodput", srv(func(s *Summary) string {
				return pct(s.UnstableStreamShare) + " / " + pct(s.ITLGoodput)
			})},
			row{"smoothing start-up delay ms", del(func(d *DeliverySummary) string { return f1(d.StartupDelayMS) })},
			row{"losses / reconnects / failed", del(func(d *DeliverySummary) string {
				return fmt.Sprintf("%d / %d / %d", d.Losses, d.Reconnects, d.FailedStreams)
			})},
			row{"failovers / coherence breaks", del(func(d *DeliverySummary) string {
				return fmt.Sprintf("%d / %d", d.Failovers, d.CoherenceBreaks)
			})},
		)
	}
	rows = append(rows, clusterRows(runs)...)
	rows = append(rows,
		section(fmt.Sprintf("STALLS > %g ms: ms (streams hit)", stall)),
		row{"stalls / stalled streams", gapCell(func(s *Summary) string {
			return fmt.Sprintf("%d / %s", s.Stalls, pct(s.StalledStreamShare))
		})})
	for _, c := range sim.Causes() {
		name := c.String()
		rows = append(rows, row{name, gapCell(serverCell(func(s *Summary) string {
			return fmt.Sprintf("%s (%s)", f1(s.StallMSByCause[name]), pct(s.StallStreamsByCause[name]))
		}))})
	}
	return rows
}

// serverCell prints n/a for a server-side figure of a measured run, which
// a client cannot see.
func serverCell(cell func(s *Summary) string) func(s *Summary) string {
	return func(s *Summary) string {
		if s.Measured {
			return "n/a"
		}
		return cell(s)
	}
}

// gapCell prints n/a for a figure of gaps when the run's source recorded
// none (a measured file with first and last token times only).
func gapCell(cell func(s *Summary) string) func(s *Summary) string {
	return func(s *Summary) string {
		if s.GapsUnavailable {
			return "n/a"
		}
		return cell(s)
	}
}

func dist3(d Dist) string { return f1(d.Mean) + "/" + f1(d.P50) + "/" + f1(d.P99) }
func spread4(s Spread) string {
	return f1(s.P50) + "/" + f1(s.P90) + "/" + f1(s.P99) + "/" + f1(s.Max)
}

// WriteSummaryTable prints the runs side by side: one row per metric, one
// column per run. FormatMarkdown gives a table for pull-request comments.
func WriteSummaryTable(w io.Writer, runs []Run, f Format) error {
	name := Printable
	if f == FormatMarkdown {
		name = MarkdownCell
	}
	header := []any{"metric"}
	for _, r := range runs {
		header = append(header, name(r.Name))
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if f == FormatMarkdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header...)
	for _, r := range summaryRows(runs) {
		cells := []any{name(r.label)}
		for i := range runs {
			if r.cell == nil {
				cells = append(cells, "")
			} else {
				cells = append(cells, r.cell(&runs[i].Summary))
			}
		}
		if f == FormatMarkdown && r.cell == nil {
			cells[0] = "**" + r.label + "**"
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	return t.Render()
}

// WriteStreamsCSV writes one row per request of every run, ordered by run
// then request id, with the run's name in the first column.
func WriteStreamsCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "id", "status", "reject_reason", "arrival_s", "input_tokens", "output_tokens",
		"ttft_ms", "tpot_ms", "e2el_ms", "chunks", "itl_mean_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms",
		"max_gap_ms", "jitter_ratio", "stalls", "stall_ms", "stall_causes", "preemptions"})
	g := func(v float64) string { return strconv.FormatFloat(finite(v), 'g', -1, 64) }
	for _, r := range runs {
		for _, s := range r.Streams {
			causes := ""
			for i, c := range s.StallCauses {
				if i > 0 {
					causes += ";"
				}
				causes += c
			}
			_ = cw.Write([]string{r.Name, strconv.Itoa(s.ID), s.Status, s.RejectReason, g(s.ArrivalS),
				strconv.Itoa(s.InputTokens), strconv.Itoa(s.OutputTokens), g(s.TTFTMS), g(s.TPOTMS), g(s.E2ELMS),
				strconv.Itoa(s.Chunks), g(s.ITLMeanMS), g(s.ITLP50MS), g(s.ITLP90MS), g(s.ITLP99MS),
				g(s.MaxGapMS), g(s.JitterRatio), strconv.Itoa(s.Stalls), g(s.StallMS), causes, strconv.Itoa(s.Preemptions)})
		}
	}
	cw.Flush()
	return cw.Error()
}
