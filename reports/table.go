package reports

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// utilizationCell shows a run's MFU, MBU and busy share; n/a for a share
// the cost model does not count, "-" for a run without steps; a share
// capped at 1 says so, with what was counted.
func utilizationCell(s *Summary) string {
	u := s.Utilization
	if u == nil {
		return "-"
	}
	return capShare(u.MFU, u.MFUUncapped) + " / " + capShare(u.MBU, u.MBUUncapped) + " / " + pct(u.BusyShare)
}

// capShare is a utilisation share as a percentage: n/a when not counted,
// and the share counted beside it when it was capped at 100 % (raw not
// nil).
func capShare(v, raw *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case raw != nil:
		return pct(*v) + " (capped; counted " + pct(*raw) + ")"
	}
	return pct(*v)
}

// capWarnings are the warnings for a run whose MFU or MBU was capped.
func capWarnings(name string, u *Utilization) []string {
	if u == nil {
		return nil
	}
	var out []string
	for _, c := range []struct {
		what, peak string
		raw        *float64
	}{{"MFU", "dense FLOP/s", u.MFUUncapped}, {"MBU", "memory bandwidth", u.MBUUncapped}} {
		if c.raw != nil {
			out = append(out, fmt.Sprintf("warning: run %s: %s counted %s of the GPUs' peak %s and is shown as 100%%: the cost model prices steps faster than the GPU can run them (check a linear fit's coefficients or the GPU's peaks).",
				name, c.what, pct(*c.raw), c.peak))
		}
	}
	return out
}

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
	ps := DefaultPercentiles
	if len(runs) > 0 {
		thr = runs[0].Summary.ITLGoodputMS
		stall = runs[0].Summary.StallThresholdMS
		jit = runs[0].Config.Metrics.UnstableJitter
		ps = choose(runs[0].Summary.Percentiles)
	}
	var keys []string
	for _, p := range ps {
		keys = append(keys, PercentileKey(p))
	}
	latHead := "mean/" + strings.Join(keys, "/")
	streamHead := strings.Join(keys, "/") + "/max"
	dist := func(d Dist) string { return distCells(d, ps) }
	rows := []row{
		section("REQUESTS"),
		{"finished / arrived", func(s *Summary) string {
			if s.Failed > 0 {
				return fmt.Sprintf("%d / %d (%d failed)", s.Finished, s.Requests, s.Failed)
			}
			return fmt.Sprintf("%d / %d", s.Finished, s.Requests)
		}},
		{"rejected", func(s *Summary) string { return strconv.Itoa(s.Rejected) }},
		{"steady state", func(s *Summary) string {
			if s.Stable {
				return "yes"
			}
			return "NO: backlog grew (see warning)"
		}},
		{"duration s", func(s *Summary) string { return f1(s.DurationS) }},
		{"requests/s", func(s *Summary) string { return f2(s.RequestsPerS) }},
		{"output tokens/s", func(s *Summary) string { return f1(s.OutputTokensPerS) }},
		section("LATENCY ms: " + latHead),
	}
	rows = append(rows, vocabularyRows(ShapeDist, ps)...)
	rows = append(rows, section("PER STREAM ms: "+streamHead))
	rows = append(rows, vocabularyRows(ShapeSpread, ps)...)
	rows = append(rows, []row{
		{fmt.Sprintf("unstable (jitter > %g)", jit), gapCell(func(s *Summary) string { return pctOf(s.UnstableStreamShare, s.StreamsWithGaps > 0) })},
		{fmt.Sprintf("ITL goodput (max gap ≤ %g ms)", thr), gapCell(func(s *Summary) string { return pctOf(s.ITLGoodput, s.Served() > 0) })},
		{"SLO goodput", func(s *Summary) string { return pctOf(s.SLOGoodput, s.Requests > 0) }},
		section(fmt.Sprintf("PERCEIVED: mean/p10/p50, share < %g", ScoreBelow)),
	}...)
	rows = append(rows, vocabularyRows(ShapeScore, ps)...)
	rows = append(rows, []row{
		{"fluid tokens/s p10/p50", func(s *Summary) string {
			if s.Fluidity.N == 0 || s.Fluidity.FluidRateN == 0 && s.Fluidity.FluidRateP10 == 0 && s.Fluidity.FluidRateP50 == 0 {
				return "n/a"
			}
			return f1(s.Fluidity.FluidRateP10) + "/" + f1(s.Fluidity.FluidRateP50)
		}},
		section("KV CACHE"),
		{"preemptions recompute / swap", serverCell(func(s *Summary) string {
			return fmt.Sprintf("%d / %d", s.Preemptions.Recompute, s.Preemptions.Swap)
		})},
		{"preempted streams", serverCell(func(s *Summary) string { return pctOf(s.PreemptedShare, s.Served() > 0) })},
		{"prefix cache hit rate", serverCell(func(s *Summary) string { return pct(s.PrefixCacheHitRate) })},
	}...)
	for i := range runs {
		if runs[i].Summary.Utilization != nil {
			at := slices.IndexFunc(rows, func(r row) bool { return r.label == "output tokens/s" }) + 1
			rows = slices.Insert(rows, at, row{"GPU use: MFU / MBU / busy", utilizationCell})
			break
		}
	}
	for i := range runs {
		if len(runs[i].Summary.PrefixCacheTiers) > 0 {
			rows = append(rows, row{"prefix hits by tier", serverCell(func(s *Summary) string {
				if len(s.PrefixCacheTiers) == 0 {
					return "no tiers"
				}
				var b strings.Builder
				for j, t := range s.PrefixCacheTiers {
					if j > 0 {
						b.WriteString(" · ")
					}
					b.WriteString(t.Name + " " + pct(t.HitRate))
				}
				return b.String()
			})})
			break
		}
	}
	for i := range runs {
		if runs[i].Summary.Preemptions.Pause > 0 {
			rows = append(rows, row{"pauses (holding blocks)", serverCell(func(s *Summary) string { return strconv.Itoa(s.Preemptions.Pause) })})
			break
		}
	}
	var terms []string
	for i := range runs {
		for _, o := range runs[i].Summary.SLO {
			if !slices.Contains(terms, o.Term) {
				terms = append(terms, o.Term)
			}
		}
	}
	if len(terms) > 0 {
		rows = append(rows, section("SLOs: verdict (value, margin)"))
		for _, term := range terms {
			rows = append(rows, row{term, func(s *Summary) string {
				i := slices.IndexFunc(s.SLO, func(o SLOOutcome) bool { return o.Term == term })
				if i < 0 {
					return "-"
				}
				return sloCell(s.SLO[i])
			}})
		}
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
			row{"acceptance rate (accepted/drafted, vLLM)", spec(func(p *SpecSummary) string { return pct(p.AcceptanceRate) })},
			row{"acceptance α (accepted/verified)", spec(func(p *SpecSummary) string { return pct(p.AcceptancePerVerifiedDraft) })},
			row{"acceptance by tenth of response", spec(func(p *SpecSummary) string {
				parts := make([]string, len(p.AcceptanceByRegion))
				for i, v := range p.AcceptanceByRegion {
					parts[i] = "-"
					if v != nil {
						parts[i] = strconv.FormatFloat(*v*100, 'f', 0, 64)
					}
				}
				return strings.Join(parts, "/") + " %"
			})},
			row{"mean acceptance length", spec(func(p *SpecSummary) string { return f2(p.MeanAcceptanceLength) })},
			row{"tokens per step", spec(func(p *SpecSummary) string { return f2(p.TokensPerStep) })},
			row{"fallback streams", spec(func(p *SpecSummary) string { return strconv.Itoa(p.FallbackStreams) })},
			row{"ITL per token", func(s *Summary) string { return dist(s.ITLPerToken) }},
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
		rows = append(rows, section("BY CLASS (ms)"))
		for _, name := range classNames {
			cls := func(f func(c *Summary) string) func(s *Summary) string {
				return func(s *Summary) string {
					c := s.ByClass[name]
					if c == nil {
						return "-"
					}
					return f(c)
				}
			}
			gap := func(c *Summary, f func() string) string {
				if c.GapsUnavailable {
					return NA
				}
				return f()
			}
			rows = append(rows,
				row{name, cls(func(c *Summary) string {
					return fmt.Sprintf("%d requests, TTFT p99 %s, SLO goodput %s", c.Requests, opt1(c.TTFT.P99, c.TTFT.N > 0), pctOf(c.SLOGoodput, c.Requests > 0))
				})},
				row{name + " streams", cls(func(c *Summary) string {
					return fmt.Sprintf("stream p99 ITL p99 %s, max gap p99 %s, ITL goodput %s, QoE mean %s; pooled ITL p99 %s",
						gap(c, func() string { return opt1(c.StreamP99ITL.P99, c.StreamP99ITL.N > 0) }),
						gap(c, func() string { return opt1(c.StreamMaxGap.P99, c.StreamMaxGap.N > 0) }),
						gap(c, func() string { return pctOf(c.ITLGoodput, c.Served() > 0) }),
						opt2(c.QoE.Mean, c.QoE.N > 0),
						gap(c, func() string { return opt1(c.ITLPooled.P99, c.ITLPooled.N > 0) }))
				})})
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
		)
		// The server view of the latency and per-stream rows.
		for _, m := range Vocabulary {
			if m.Label == "" || m.Shape == ShapeScore {
				continue
			}
			rows = append(rows, row{"server " + m.Name, srv(metricCell(m, ps))})
		}
		rows = append(rows,
			row{"server unstable / ITL goodput", srv(func(s *Summary) string {
				return pctOf(s.UnstableStreamShare, s.StreamsWithGaps > 0) + " / " + pctOf(s.ITLGoodput, s.Served() > 0)
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
			return fmt.Sprintf("%d / %s", s.Stalls, pctOf(s.StalledStreamShare, s.Served() > 0))
		})})
	for _, c := range sim.Causes() {
		name := c.String()
		rows = append(rows, row{name, gapCell(serverCell(func(s *Summary) string {
			return fmt.Sprintf("%s (%s)", f1(s.StallMSByCause[name]), pctOf(s.StallStreamsByCause[name], s.Served() > 0))
		}))})
	}
	return rows
}

// vocabularyRows are the comparison table's rows of the Vocabulary's
// populations of shape sh: each row with a Label, in its order, n/a for
// a figure of gaps when the run recorded none.
func vocabularyRows(sh Shape, ps []float64) []row {
	var rows []row
	for _, m := range Vocabulary {
		if m.Label == "" || m.Shape != sh {
			continue
		}
		cell := metricCell(m, ps)
		if m.PerGap {
			cell = gapCell(cell)
		}
		rows = append(rows, row{m.Label, cell})
	}
	return rows
}

// metricCell prints m's statistics as its Shape shows them: mean and the
// percentiles ps, the percentiles and max, or a score's summary.
func metricCell(m Metric, ps []float64) func(s *Summary) string {
	switch m.Shape {
	case ShapeSpread:
		return func(s *Summary) string { return spreadCells(m.Dist(s), ps) }
	case ShapeScore:
		return func(s *Summary) string { return scoreCells(m.Score(s)) }
	}
	return func(s *Summary) string { return distCells(m.Dist(s), ps) }
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

// NA is what a table shows for a figure of an empty population.
const NA = "n/a"

// distCells prints mean and the percentiles ps of d, n/a when empty.
func distCells(d Dist, ps []float64) string {
	if d.N == 0 {
		return NA
	}
	out := f1(d.Mean)
	for _, p := range ps {
		v, _ := d.At(p)
		out += "/" + f1(v)
	}
	return out
}

// spreadCells prints the percentiles ps and max of d, n/a when empty.
func spreadCells(d Dist, ps []float64) string {
	if d.N == 0 {
		return NA
	}
	var out string
	for _, p := range ps {
		v, _ := d.At(p)
		out += f1(v) + "/"
	}
	return out + f1(d.Max)
}

func scoreCells(s ScoreSummary) string {
	if s.N == 0 {
		return NA
	}
	return f2(s.Mean) + "/" + f2(s.P10) + "/" + f2(s.P50) + ", " + pct(s.BelowShare)
}

func pctOf(v float64, defined bool) string {
	if !defined {
		return NA
	}
	return pct(v)
}

func opt1(v float64, defined bool) string {
	if !defined {
		return NA
	}
	return f1(v)
}

func opt2(v float64, defined bool) string {
	if !defined {
		return NA
	}
	return f2(v)
}

// sloCell prints a term's verdict with its value and margin.
func sloCell(o SLOOutcome) string {
	v := "PASS"
	if !o.Pass {
		v = "FAIL"
	}
	if o.Value == nil {
		return v + " (undefined: " + o.Note + ")"
	}
	return fmt.Sprintf("%s (%s, margin %s)", v, unitText(*o.Value, o.Unit), unitText(*o.Margin, o.Unit))
}

// unitText prints v in unit: ms, tokens/s, share (as %), score or ratio.
func unitText(v float64, unit string) string {
	switch unit {
	case "ms":
		return f1(v) + " ms"
	case "share":
		return strconv.FormatFloat(finite(v)*100, 'f', 1, 64) + "%"
	case "tokens/s":
		return f1(v) + "/s"
	}
	return f2(v)
}

// WriteSummaryTable prints the runs side by side: one row per metric, one
// column per run, then a warning line for each run that never reached a
// steady state. FormatMarkdown gives a table for pull-request comments.
func WriteSummaryTable(w io.Writer, runs []Run, f Format) error {
	if err := WriteSummaryRows(w, runs, f); err != nil {
		return err
	}
	for i := range runs {
		if s := &runs[i].Summary; !s.Stable {
			fmt.Fprintf(w, "warning: run %s did not reach a steady state: %s; its figures depend on the run's length.\n", Printable(runs[i].Name), s.StableNote)
		}
		for _, l := range capWarnings(Printable(runs[i].Name), runs[i].Summary.Utilization) {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// WriteSummaryRows is WriteSummaryTable without the warnings: the table alone.
func WriteSummaryRows(w io.Writer, runs []Run, f Format) error {
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

// streamsCSVHeader is the --streams CSV's header: the run, then the stream
// rows' keys, the Vocabulary's for its populations (rowKeys).
func streamsCSVHeader() []string {
	return []string{"run", "id", "status", "reject_reason", "arrival_s", "input_tokens", "output_tokens",
		rowKeys.ttft, rowKeys.tpot, rowKeys.e2el, "chunks", "itl_mean_ms", rowKeys.itlP50, "itl_p90_ms", rowKeys.itlP99,
		rowKeys.maxGap, rowKeys.jitter, "stalls", "stall_ms", "stall_causes", "preemptions"}
}

// WriteStreamsCSV writes one row per request of every run, ordered by run
// then request id, with the run's name in the first column.
func WriteStreamsCSV(w io.Writer, runs []Run) error {
	var cw *csv.Writer
	g := func(v float64) string { return strconv.FormatFloat(finite(v), 'g', -1, 64) }
	bw := bufio.NewWriterSize(w, 1<<16)
	cw = csv.NewWriter(bw)
	_ = cw.Write(streamsCSVHeader())
	cw.Flush()
	// Row by row (a million rows are never held), each formatted by a CSV
	// writer of its own goroutine's (formatRows).
	type rowCSV struct {
		buf bytes.Buffer
		cw  *csv.Writer
	}
	pool := sync.Pool{New: func() any { x := &rowCSV{}; x.cw = csv.NewWriter(&x.buf); return x }}
	for i := range runs {
		r := &runs[i]
		_, err := r.formatRows(func(dst []byte, _ int, s *StreamRow) ([]byte, error) {
			x := pool.Get().(*rowCSV)
			defer pool.Put(x)
			x.buf.Reset()
			_ = x.cw.Write([]string{r.Name, strconv.Itoa(s.ID), s.Status, s.RejectReason, g(s.ArrivalS),
				strconv.Itoa(s.InputTokens), strconv.Itoa(s.OutputTokens), g(s.TTFTMS), g(s.TPOTMS), g(s.E2ELMS),
				strconv.Itoa(s.Chunks), g(s.ITLMeanMS), g(s.ITLP50MS), g(s.ITLP90MS), g(s.ITLP99MS),
				g(s.MaxGapMS), g(s.JitterRatio), strconv.Itoa(s.Stalls), g(s.StallMS), strings.Join(s.StallCauses, ";"), strconv.Itoa(s.Preemptions)})
			x.cw.Flush()
			return append(dst, x.buf.Bytes()...), x.cw.Error()
		}, func(b []byte) error {
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
