package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// ValidationDoc is the JSON `itlsim validate --json` writes.
type ValidationDoc struct {
	Scenario sim.Config   `json:"scenario"`
	Runs     []Comparison `json:"runs"`
}

// SideBySide lists, per measured run, the measurement and the simulation
// of its median seed (by TTFT p50), for the HTML report.
func SideBySide(cmps []Comparison, cfg sim.Config) []reports.Run {
	var runs []reports.Run
	for i := range cmps {
		c := &cmps[i]
		mcfg := sim.Config{Name: c.Name, Metrics: cfg.Metrics}
		m := reports.NewRunOptions(c.Name+" measured", nil, mcfg, c.Measured, true)
		m.Source = &reports.Source{File: c.File, Notes: c.Notes}
		runs = append(runs, m)
		k := medianSeed(c)
		scfg := cfg
		scfg.Name = c.Name + " simulated"
		runs = append(runs, reports.NewRunOptions(scfg.Name, map[string]string{"seed": fmt.Sprint(c.Seeds[k])}, scfg, c.Simulated[k], true))
	}
	return runs
}

// findingKeys are the figures a validation page's finding states, with
// their words.
var findingKeys = [][2]string{{"ttft_p50_ms", "TTFT p50"}, {"tpot_p50_ms", "TPOT p50"}, {"itl_p99_ms", "ITL p99"},
	{"stream_p99_itl_p50_ms", "the median stream's p99 ITL"}}

// Finding says in words, for each run, how far its simulation is from its
// measurement on the headline figures (simulated against measured, the
// error signed: positive when the simulation is slower), for the opening
// of the HTML page that shows them side by side.
func Finding(cmps []Comparison) []string {
	var out []string
	for i := range cmps {
		c := &cmps[i]
		var parts []string
		for _, k := range findingKeys {
			fg, ok := c.Figure(k[0])
			if !ok {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s against %s (%s)", k[1],
				numNA(fg.Simulated, fg.SimulatedNA), numNA(fg.Measured, fg.MeasuredNA), errText(fg.Error)))
		}
		seeds := "one seed"
		if n := len(c.Seeds); n > 1 {
			seeds = fmt.Sprintf("the median of %d seeds", n)
		}
		out = append(out, fmt.Sprintf("%s, simulated against measured (ms, %s; the table of every figure is validate's output): %s.",
			c.Name, seeds, strings.Join(parts, ", ")))
	}
	return out
}

func medianSeed(c *Comparison) int {
	f, _ := c.Figure("ttft_p50_ms")
	best, at := math.Inf(1), 0
	for k := range c.Summaries {
		if d := math.Abs(c.Summaries[k].TTFT.P50 - f.Simulated); d < best {
			best, at = d, k
		}
	}
	return at
}

// overviewKeys are the figures of the first table, one row per run.
var overviewKeys = []string{"ttft_p50_ms", "tpot_p50_ms", "itl_p50_ms", "itl_p99_ms", "e2el_p50_ms", "stream_p99_itl_p50_ms", "output_tokens_per_s"}

func errText(e *float64) string {
	if e == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *e*100)
}

func newTable(w io.Writer, f reports.Format) *tablewriter.Table {
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft), tablewriter.WithRowAutoWrap(tw.WrapNone)}
	if f == reports.FormatMarkdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return tablewriter.NewTable(w, opts...)
}

// WriteValidation prints an overview (measured / simulated and the error of
// the headline figures, one row per run), then every figure of each run.
func WriteValidation(w io.Writer, cmps []Comparison, f reports.Format) error {
	t := newTable(w, f)
	head := []string{"run", "arrivals"}
	for _, k := range overviewKeys {
		head = append(head, k+" meas/sim (err)")
	}
	t.Header(head)
	for i := range cmps {
		c := &cmps[i]
		row := []string{c.Name, c.Arrivals}
		for _, k := range overviewKeys {
			fg, _ := c.Figure(k)
			row = append(row, fmt.Sprintf("%s / %s (%s)", numNA(fg.Measured, fg.MeasuredNA), numNA(fg.Simulated, fg.SimulatedNA), errText(fg.Error)))
		}
		_ = t.Append(row)
	}
	if err := t.Render(); err != nil {
		return err
	}
	for i := range cmps {
		c := &cmps[i]
		fmt.Fprintln(w)
		seeds := fmt.Sprintf("seed %d", c.Seeds[0])
		if n := len(c.Seeds); n > 1 {
			seeds = fmt.Sprintf("seeds %d–%d (median, min–max)", c.Seeds[0], c.Seeds[n-1])
		}
		title := fmt.Sprintf("%s: %d requests, %s, %s", c.Name, c.Requests, c.Arrivals, seeds)
		if c.WarmBlocks > 0 {
			title += fmt.Sprintf(", %d KV blocks warm", c.WarmBlocks)
		}
		if f == reports.FormatMarkdown {
			fmt.Fprintf(w, "**%s**\n\n", title)
		} else {
			fmt.Fprintln(w, title)
		}
		t := newTable(w, f)
		sens := slices.ContainsFunc(c.Figures, func(fg Figure) bool { return fg.Sensitivity != nil })
		head := []string{"metric", "measured", "simulated", "min–max", "error"}
		if sens {
			head = append(head, "sensitivity %/%")
		}
		var fe []string // the front-end constants with an elasticity
		for _, p := range FrontEndConstants {
			if slices.ContainsFunc(c.Figures, func(fg Figure) bool { _, ok := fg.FrontEnd[p]; return ok }) {
				fe = append(fe, p)
				head = append(head, frontEndLabel[p]+" %/%")
			}
		}
		t.Header(head)
		for _, fg := range c.Figures {
			rng := num(fg.Min) + "–" + num(fg.Max)
			if fg.SimulatedNA {
				rng = "n/a"
			}
			row := []string{fg.Metric, numNA(fg.Measured, fg.MeasuredNA), numNA(fg.Simulated, fg.SimulatedNA), rng, errText(fg.Error)}
			if sens {
				row = append(row, elasticityText(fg.Sensitivity))
			}
			for _, p := range fe {
				if el, ok := fg.FrontEnd[p]; ok {
					row = append(row, elasticityText(&el))
				} else {
					row = append(row, "n/a")
				}
			}
			_ = t.Append(row)
		}
		if err := t.Render(); err != nil {
			return err
		}
		for _, n := range c.Notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
	return nil
}

// frontEndLabel names a front-end constant's elasticity column.
var frontEndLabel = map[string]string{
	"server.serial_us_per_prompt_token":     "front end per prompt token",
	"server.serial_ms_per_request":          "front end per request",
	"server.request_overhead_ms":            "front end fixed",
	"server.handoff_ms":                     "front end hand-off",
	"server.detokenize_us_per_output_token": "front end per output token",
}

// elasticityText is an elasticity in % per %, signed, or n/a.
func elasticityText(el *float64) string {
	if el == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f", *el)
}

// numNA is num, or n/a for a figure its side cannot give.
func numNA(v float64, na bool) string {
	if na {
		return "n/a"
	}
	return num(v)
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// WriteLeaveOneOut prints, for each held-out run of n, the errors of the
// fit made on the other runs (evals simulations per fit at most), then the
// fitted fields, one row per fit.
func WriteLeaveOneOut(w io.Writer, hs []HoldOut, n, evals int) error {
	fmt.Fprintf(w, "out of sample: each run simulated with the fields fitted on the other %d runs (%d simulations per fit at most)\n\n", n-1, evals)
	t := newTable(w, reports.FormatTable)
	hdr := []any{"held-out run"}
	for _, k := range HoldOutMetrics {
		hdr = append(hdr, k+" meas/sim (err)")
	}
	t.Header(hdr...)
	for _, h := range hs {
		row := []any{h.Run}
		for _, k := range HoldOutMetrics {
			f, ok := h.Comparison.Figure(k)
			if !ok || f.Error == nil {
				row = append(row, "n/a")
				continue
			}
			row = append(row, num(f.Measured)+" / "+num(f.Simulated)+" ("+errText(f.Error)+")")
		}
		_ = t.Append(row...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	// The fitted fields, one row per fit (each on every run but its own).
	var keys []string
	for _, h := range hs {
		for k := range h.Values {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	t = newTable(w, reports.FormatTable)
	hdr = []any{"fitted without"}
	for _, k := range keys {
		hdr = append(hdr, k)
	}
	t.Header(hdr...)
	for _, h := range hs {
		row := []any{h.Run}
		for _, k := range keys {
			v, ok := h.Values[k]
			if !ok { // a front-end field this fit held
				row = append(row, "held")
				continue
			}
			row = append(row, num(v))
		}
		_ = t.Append(row...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, h := range hs {
		if h.FrontEnd != nil {
			fmt.Fprintf(w, "fitted without %s: %s\n", h.Run, h.FrontEnd.Summary())
		}
	}
	return nil
}

// TuneReport fits base to the measured runs with the simulation in the
// loop, prints the fitted fields and the errors before and after, and
// returns the profile with the comment to write above it.
func TuneReport(w io.Writer, base sim.Config, recs []ingest.Recording, opt TuneOptions) (*Profile, string, error) {
	res, err := Tune(base, recs, opt)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(w, "fitted with the simulation in the loop: %d simulations, loss (mean squared log error) %.4g -> %.4g\n\n",
		res.Evals, res.LossBefore, res.LossAfter)
	if res.FrontEnd != nil {
		fmt.Fprintf(w, "%s\n\n", res.FrontEnd.Summary())
	}
	t := newTable(w, reports.FormatTable)
	t.Header("field", "before", "after")
	keys := make([]string, 0, len(res.Values))
	for k := range res.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		before, _ := FieldValue(base, k)
		_ = t.Append(k, num(before), num(res.Values[k]))
	}
	if err := t.Render(); err != nil {
		return nil, "", err
	}
	fmt.Fprintln(w)
	t = newTable(w, reports.FormatTable)
	t.Header("run", "metric", "measured", "before", "error", "after", "error")
	for i := range res.Before {
		for _, key := range TargetMetrics {
			b, _ := res.Before[i].Figure(key)
			a, _ := res.After[i].Figure(key)
			_ = t.Append(res.Before[i].Name, key, num(b.Measured), num(b.Simulated), errText(b.Error), num(a.Simulated), errText(a.Error))
		}
	}
	if err := t.Render(); err != nil {
		return nil, "", err
	}
	names := make([]string, len(recs))
	for i := range recs {
		names[i] = recs[i].Name
	}
	src := "measured runs " + strings.Join(names, ", ")
	p := ProfileOf(res.Config, src)
	p.Fit = map[string]float64{"loss_before": res.LossBefore, "loss_after": res.LossAfter}
	return p, "itlsim calibrate: fitted to " + src + " with the simulation in the loop", nil
}

// FitStepsReport fits the step cost model (model: linear or roofline) of
// base to the step timings in the file path, prints the fit, its R², MAPE
// and the worst rows (at most worst), and returns the profile with the
// comment to write above it.
func FitStepsReport(w io.Writer, base sim.Config, path, model string, worst int) (*Profile, string, error) {
	steps, notes, err := ReadSteps(path, Select{Model: base.Model, GPU: base.GPU, TP: base.TP})
	if err != nil {
		return nil, "", err
	}
	if worst < 0 {
		return nil, "", fmt.Errorf("--worst: must be ≥ 0, got %d", worst)
	}
	p := &Profile{Model: base.Model, GPU: base.GPU, TP: base.TP, Source: "step timings " + path}
	var m cost.Model
	switch model {
	case "linear":
		c, err := FitLinear(steps)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		p.Cost = ProfileCost{Model: "linear", Linear: &c}
		if m, err = cost.NewLinear(c); err != nil {
			return nil, "", err
		}
		fmt.Fprintf(w, "linear model fitted by non-negative least squares to %d steps: c0 %.4g µs, c1 %.4g µs/prefill token, c2 %.4g µs/decode seq, c3 %.4g µs/context token, c4 %.4g µs/prefill token×context\n",
			len(steps), c.C0US, c.C1USPerPrefillToken, c.C2USPerDecodeSeq, c.C3USPerDecodeContextToken, c.C4USPerPrefillTokenContext)
	case "roofline":
		setup, err := base.Resolve()
		if err != nil {
			return nil, "", err
		}
		var graphs []int
		if rf, ok := setup.Cost.(*cost.Roofline); ok {
			graphs = rf.GraphSizes()
		}
		c, err := FitRoofline(setup.Model, setup.GPU, base.TP, base.Cost.Roofline, graphs, steps)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		p.Cost = ProfileCost{Model: "roofline", Roofline: &c}
		rf, err := cost.NewRoofline(setup.Model, setup.GPU, base.TP, c)
		if err == nil {
			m, err = rf.WithCUDAGraphs(graphs)
		}
		if err != nil {
			return nil, "", err
		}
		graphNote := ""
		if len(graphs) > 0 {
			graphNote = fmt.Sprintf(", graph_kernel_overhead_us %.2f (CUDA graphs up to %d tokens)", c.GraphKernelOverheadUS, graphs[len(graphs)-1])
		}
		fmt.Fprintf(w, "roofline of %s on %d × %s fitted to %d steps: compute_efficiency %.3f, memory_efficiency %.3f, overhead_us %.1f, seq_overhead_us %.2f, kernel_overhead_us %.2f%s\n",
			setup.Model.Name, base.TP, setup.GPU.Name, len(steps), c.ComputeEfficiency, c.MemoryEfficiency, c.OverheadUS, c.SeqOverheadUS, c.KernelOverheadUS, graphNote)
	default:
		return nil, "", fmt.Errorf("--fit-model: must be linear or roofline, got %q", model)
	}
	q := Quality(m, steps, worst)
	fmt.Fprintf(w, "R² %.4f, MAPE %.2f%%\n", q.R2, q.MAPE*100)
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if len(q.Worst) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, reports.FormatTable)
		t.Header("line", "measured ms", "predicted ms", "error")
		for _, r := range q.Worst {
			e := r.Error
			_ = t.Append(fmt.Sprint(r.Line), num(r.MeasuredMS), num(r.PredictedMS), errText(&e))
		}
		if err := t.Render(); err != nil {
			return nil, "", err
		}
	}
	p.Fit = map[string]float64{"r2": q.R2, "mape": q.MAPE}
	return p, "itlsim calibrate --steps " + path + ": fitted " + model + " model", nil
}
