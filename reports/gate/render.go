package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/reports"
)

// Write prints the report: a table (reports.FormatTable), a pull-request
// comment (FormatMarkdown) or JSON (FormatJSON).
func Write(w io.Writer, r *Report, f reports.Format) error {
	if f == reports.FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	md := f == reports.FormatMarkdown
	verdict := "PASS"
	switch {
	case r.Verdict == Inconclusive:
		verdict = "INCONCLUSIVE"
	case !r.Pass:
		verdict = "FAIL"
	}
	ci := "change"
	if r.Bootstrap > 0 {
		ci = fmt.Sprintf("%g%% CI of change", r.Confidence*100)
	}
	class := ""
	if r.Class != "" {
		class = ", class " + r.Class
	}
	switch {
	case r.Baseline == "" && md:
		fmt.Fprintf(w, "**itlsim gate: %s** — candidate `%s` (%d streams%s) judged by its SLO terms\n\n", verdict, r.Candidate, r.CandidateStreams, class)
	case r.Baseline == "":
		fmt.Fprintf(w, "itlsim gate: %s — candidate %s (%d streams%s) judged by its SLO terms\n", verdict, r.Candidate, r.CandidateStreams, class)
	case md:
		fmt.Fprintf(w, "**itlsim gate: %s** — candidate `%s` (%d streams) against baseline `%s` (%d streams)%s\n\n",
			verdict, r.Candidate, r.CandidateStreams, r.Baseline, r.BaselineStreams, class)
	default:
		fmt.Fprintf(w, "itlsim gate: %s — candidate %s (%d streams) against baseline %s (%d streams)%s\n",
			verdict, r.Candidate, r.CandidateStreams, r.Baseline, r.BaselineStreams, class)
	}
	if r.Baseline == "" {
		if err := writeSLO(w, r, md); err != nil {
			return err
		}
		writePerceived(w, r)
		if failed := r.Failed(); len(failed) > 0 {
			fmt.Fprintf(w, "Failed: %s.\n", strings.Join(failed, ", "))
		}
		return nil
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	mdeHead := fmt.Sprintf("MDE (%g%% power)", Power*100)
	if r.Bootstrap > 0 {
		t.Header("metric", "baseline", "candidate", "change", ci, "test", "n", mdeHead, "verdict")
	} else { // no interval: one change column
		t.Header("metric", "baseline", "candidate", "change", "test", "n", mdeHead, "verdict")
	}
	for _, row := range r.Rows {
		v := row.Verdict
		if row.Noise {
			v += " (within noise)"
		}
		if md && row.Verdict == Fail {
			v = "**" + v + "**"
		}
		cells := []any{row.Metric, valueText(row, row.Baseline), valueText(row, row.Candidate), changeText(row, row.Change)}
		if r.Bootstrap > 0 {
			cells = append(cells, "["+changeText(row, row.Low)+", "+changeText(row, row.High)+"]")
		}
		test := row.Test
		if row.PValue != nil {
			test += " p=" + strconv.FormatFloat(float64(*row.PValue), 'g', 2, 64)
		}
		cells = append(cells, test, fmt.Sprintf("%d+%d", row.NBaseline, row.NCandidate), mdeText(row))
		if err := t.Append(append(cells, v)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if md {
		fmt.Fprintln(w)
	}
	how := fmt.Sprintf("a metric fails when its whole %g%% interval is worse than the tolerance, %s; "+
		"the interval is from %d bootstrap resamples (seed %d) of blocks of %d baseline and %d candidate streams consecutive by arrival",
		r.Confidence*100, tolText(r.Tolerance), r.Bootstrap, r.Seed, r.BaselineBlock, r.CandidateBlock)
	if r.Bootstrap == 0 {
		how = "a metric fails when its change is worse than the tolerance, " + tolText(r.Tolerance) + " (no bootstrap)"
	}
	fmt.Fprintln(w, how+".")
	for _, row := range r.Rows {
		if row.Test == "fisher" {
			fmt.Fprintf(w, "%s is judged by Fisher's exact test on the counts of streams whose largest gap exceeds the stall threshold, one-sided at %s%%.\n",
				row.Metric, trim((1-r.Confidence)/2*100))
		}
	}
	fmt.Fprintf(w, "n is the streams each test used (baseline+candidate), MDE the smallest regression it detects with %g%% probability; "+
		"a chosen metric whose MDE exceeds %g%% (%g points for shares) is inconclusive.\n", Power*100, PowerEffect*100, PowerEffect*100)
	if len(r.Inconclusive) > 0 {
		fmt.Fprintf(w, "Inconclusive: %s (too few streams to detect a %g%% regression).\n", strings.Join(r.Inconclusive, ", "), PowerEffect*100)
	}
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(w, "%s: %s.\n", row.Metric, row.Note)
		}
	}
	writePerceived(w, r)
	if len(r.SLO) > 0 {
		if md {
			fmt.Fprintln(w)
		}
		if err := writeSLO(w, r, md); err != nil {
			return err
		}
	}
	if failed := r.Failed(); len(failed) > 0 {
		fmt.Fprintf(w, "Failed: %s.\n", strings.Join(failed, ", "))
	}
	return nil
}

// writePerceived prints the perceived scores, mean/p10/p50 and the share
// below 0.9, for reading beside the verdicts.
func writePerceived(w io.Writer, r *Report) {
	if r.QoE == nil {
		return
	}
	text := func(s reports.ScoreSummary) string {
		if s.N == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3f/%.3f/%.3f, %s below %g", s.Mean, s.P10, s.P50, pctText(s.BelowShare), s.Below)
	}
	for _, p := range []struct {
		name string
		v    *Perceived
	}{{"QoE (Andes)", r.QoE}, {"fluidity (Etalon)", r.Fluidity}} {
		if r.Baseline == "" {
			fmt.Fprintf(w, "Perceived %s mean/p10/p50: candidate %s.\n", p.name, text(p.v.Candidate))
			continue
		}
		fmt.Fprintf(w, "Perceived %s mean/p10/p50: baseline %s; candidate %s.\n", p.name, text(p.v.Baseline), text(p.v.Candidate))
	}
}

// writeSLO prints the SLO terms judged on the candidate.
func writeSLO(w io.Writer, r *Report, md bool) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header("SLO term", "candidate", "limit", "margin", "verdict")
	for _, o := range r.SLO {
		v := "PASS"
		if !o.Pass {
			v = "FAIL"
			if md {
				v = "**FAIL**"
			}
		}
		val, margin := "n/a ("+o.Note+")", "n/a"
		if o.Value != nil {
			val, margin = sloValue(*o.Value, o.Unit), sloValue(*o.Margin, o.Unit)
		}
		if err := t.Append(o.Term, val, sloValue(o.Limit, o.Unit), margin, v); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if md {
		fmt.Fprintln(w)
	}
	return nil
}

func sloValue(v float64, unit string) string {
	switch unit {
	case "share":
		return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
	case "tokens/s":
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	case "ms":
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func tolText(tol float64) string {
	return fmt.Sprintf("%s relative for times and ratios, %s points for shares", pctText(tol), trim(tol*100))
}

func trim(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func pctText(v float64) string { return trim(v*100) + "%" }

// valueText prints a metric's value in its unit; n/a when undefined.
func valueText(row Row, v Value) string {
	f := float64(v)
	if math.IsNaN(f) {
		return "n/a"
	}
	switch row.Unit {
	case "score":
		return strconv.FormatFloat(f, 'f', 3, 64)
	case "share":
		return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
	case "ratio":
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	if math.Abs(f) < 10 {
		return strconv.FormatFloat(f, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " ms"
}

// mdeText prints a row's MDE as a change: "+12.3%", "+1.5 pts"; "none"
// when no effect is detected that often.
func mdeText(row Row) string {
	f := float64(row.MDE)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "none"
	}
	return changeText(row, row.MDE)
}

// changeText prints a change with its sign: relative in %, shares in points.
func changeText(row Row, v Value) string {
	f := float64(v)
	switch {
	case math.IsInf(f, 1):
		return "+∞"
	case math.IsInf(f, -1):
		return "−∞"
	case math.IsNaN(f):
		return "n/a"
	}
	sign := "+"
	if f < 0 {
		sign = "−"
		f = -f
	}
	if row.ChangeKind == "points" {
		return sign + strconv.FormatFloat(f*100, 'f', 1, 64) + " pts"
	}
	return sign + strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}
