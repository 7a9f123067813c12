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
	if !r.Pass {
		verdict = "FAIL"
	}
	ci := fmt.Sprintf("%g%% CI of change", r.Confidence*100)
	if md {
		fmt.Fprintf(w, "**itlsim gate: %s** — candidate `%s` (%d streams) against baseline `%s` (%d streams)\n\n",
			verdict, r.Candidate, r.CandidateStreams, r.Baseline, r.BaselineStreams)
	} else {
		fmt.Fprintf(w, "itlsim gate: %s — candidate %s (%d streams) against baseline %s (%d streams)\n",
			verdict, r.Candidate, r.CandidateStreams, r.Baseline, r.BaselineStreams)
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
	if r.Bootstrap > 0 {
		t.Header("metric", "baseline", "candidate", "change", ci, "verdict")
	} else { // no interval: one change column
		t.Header("metric", "baseline", "candidate", "change", "verdict")
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
	if failed := r.Failed(); len(failed) > 0 {
		fmt.Fprintf(w, "Regressed: %s.\n", strings.Join(failed, ", "))
	}
	return nil
}

func tolText(tol float64) string {
	return fmt.Sprintf("%s relative for times and ratios, %s points for shares", pctText(tol), trim(tol*100))
}

func trim(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func pctText(v float64) string { return trim(v*100) + "%" }

// valueText prints a metric's value in its unit.
func valueText(row Row, v Value) string {
	f := float64(v)
	switch row.Unit {
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
