package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/calibrate"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

type calibrateOptions struct {
	run       *runOptions
	scenario  string
	input     string
	steps     string
	costModel string
	fit       []string
	evals     int
	seeds     int
	warmCache bool
	holdOut   bool
	output    string
	worst     int
}

func newCalibrateCmd(temps *tempFiles) *cobra.Command {
	o := &calibrateOptions{run: &runOptions{temps: temps, values: map[string]*string{}}}
	cmd := &cobra.Command{
		Use:   "calibrate [MEASURED...] [--steps FILE.csv] [scenario flags] -o PROFILE.yaml",
		Short: "Fit the step cost model to step timings or to measured runs and write a profile",
		Long: `Fit the step cost model and write a profile that run --profile FILE (or a
scenario's cost.profile) uses.

With --steps FILE.csv, fit to step timings: rows of prefill_tokens,
decode_seqs, decode_context, duration_ms (a header names the columns; a
prefill_context column, Σ chunk × context attended, is optional).
Sarathi-Serve's step profiles and Splitwise's perf_model.csv are read as
they are; of Splitwise's setups, the rows of --model, --gpu and --tp. The linear
model's coefficients are fitted by non-negative least squares; with
--fit-model roofline the roofline's efficiencies and overheads are fitted to
the same rows. It prints R², MAPE and the worst rows.

With measured runs (vLLM bench results, AIPerf, GuideLLM, itlsim streams) and
the scenario they were served under, fit the roofline's efficiencies and
overheads and the server's overhead with the simulation in the loop
(Nelder-Mead), minimising the errors of TTFT, TPOT and ITL percentiles, and
print the errors before and after.

Fields --fit may name: ` + strings.Join(calibrate.TunableNames(), ", "),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.calibrate(cmd, args)
		},
	}
	f := cmd.Flags()
	o.run.bindFields(cmd, false)
	f.StringVar(&o.scenario, "scenario", "", "scenario file the measured runs were served under")
	f.StringVar(&o.input, "input-format", "auto", "format of the measured files: auto, "+strings.Join(ingest.Formats(), ", "))
	f.StringVar(&o.steps, "steps", "", "CSV of step timings to fit (prefill_tokens, decode_seqs, decode_context, duration_ms; or a Sarathi-Serve or Splitwise profile)")
	f.StringVar(&o.costModel, "fit-model", "linear", "with --steps: the model fitted, linear or roofline")
	f.StringSliceVar(&o.fit, "fit", nil, "with measured runs: fields to fit (default: "+strings.Join(calibrate.DefaultTuned, ",")+")")
	f.IntVar(&o.evals, "evals", 300, "with measured runs: simulations the fit may spend")
	f.IntVar(&o.seeds, "seeds", 2, "with measured runs: arrival draws per simulation when arrivals are random")
	f.BoolVar(&o.warmCache, "warm-cache", false, "with measured runs: earlier runs' prompts start cached (see validate)")
	f.BoolVar(&o.holdOut, "leave-one-out", false, "with measured runs: fit on all runs but one and validate on the one left out, for each run; print the out-of-sample errors and write no profile")
	f.StringVarP(&o.output, "output", "o", "", "write the fitted profile (YAML) to this file")
	f.IntVar(&o.worst, "worst", 5, "with --steps: rows of largest relative error to print")
	return cmd
}

func (o *calibrateOptions) calibrate(cmd *cobra.Command, args []string) error {
	if (o.steps == "") == (len(args) == 0) {
		return fmt.Errorf("give either --steps FILE.csv or measured run files, not both or neither")
	}
	if o.holdOut && (o.steps != "" || o.output != "") {
		return fmt.Errorf("--leave-one-out checks a fit out of sample and writes no profile: give measured runs without --steps and -o")
	}
	base, err := oneConfig(cmd, o.run, o.scenario, "calibrate fits")
	if err != nil {
		return err
	}
	files := newOutputs(o.run.temps)
	defer files.Discard()
	out := files.Add("--output", o.output)
	files.Reads("FILE", args...)
	files.Reads("--steps", o.steps)
	files.Reads("--scenario", o.scenario)
	if err := files.Check(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	var prof *calibrate.Profile
	var comment string
	switch {
	case o.holdOut:
		return o.leaveOneOut(w, base, args)
	case o.steps != "":
		prof, comment, err = o.fitSteps(w, base)
	default:
		prof, comment, err = o.tune(w, base, args)
	}
	if err != nil {
		return err
	}
	if out != nil {
		if err := out.Write(func(f *os.File) error { return prof.Write(f, comment) }); err != nil {
			return err
		}
		if err := files.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "itlsim: wrote the profile to %s (use it with run --profile %s)\n", o.output, o.output)
	}
	return nil
}

// measured reads the measured runs and the tuning options the flags give.
func (o *calibrateOptions) measured(args []string) ([]ingest.Recording, calibrate.TuneOptions, error) {
	in, err := ingest.ParseFormat(o.input)
	if err != nil {
		return nil, calibrate.TuneOptions{}, fmt.Errorf("--input-format: %w", err)
	}
	if o.seeds < 1 || o.seeds > 100 {
		return nil, calibrate.TuneOptions{}, fmt.Errorf("--seeds: must be in [1, 100], got %d", o.seeds)
	}
	if o.evals < 1 || o.evals > 10000 {
		return nil, calibrate.TuneOptions{}, fmt.Errorf("--evals: must be in [1, 10000], got %d", o.evals)
	}
	recs, err := readRecordings(args, in)
	if err != nil {
		return nil, calibrate.TuneOptions{}, err
	}
	return recs, calibrate.TuneOptions{Params: o.fit, Evals: o.evals,
		Validate: calibrate.Options{Seeds: o.seeds, WarmCache: o.warmCache}}, nil
}

// leaveOneOut prints, for each measured run, the errors of a fit made on
// the other runs: the fidelity a user can expect on a run nobody fitted.
func (o *calibrateOptions) leaveOneOut(w io.Writer, base sim.Config, args []string) error {
	recs, opt, err := o.measured(args)
	if err != nil {
		return err
	}
	hs, err := calibrate.LeaveOneOut(base, recs, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "out of sample: each run simulated with the fields fitted on the other %d runs (%d simulations per fit at most)\n\n", len(recs)-1, o.evals)
	t := newTable(w, reports.FormatTable)
	hdr := []any{"held-out run"}
	for _, k := range calibrate.HoldOutMetrics {
		hdr = append(hdr, k+" meas/sim (err)")
	}
	t.Header(hdr...)
	for _, h := range hs {
		row := []any{h.Run}
		for _, k := range calibrate.HoldOutMetrics {
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
	keys := make([]string, 0, len(hs[0].Values))
	for k := range hs[0].Values {
		keys = append(keys, k)
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
			row = append(row, num(h.Values[k]))
		}
		_ = t.Append(row...)
	}
	return t.Render()
}

func (o *calibrateOptions) tune(w io.Writer, base sim.Config, args []string) (*calibrate.Profile, string, error) {
	recs, opt, err := o.measured(args)
	if err != nil {
		return nil, "", err
	}
	res, err := calibrate.Tune(base, recs, opt)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(w, "fitted with the simulation in the loop: %d simulations, loss (mean squared log error) %.4g -> %.4g\n\n",
		res.Evals, res.LossBefore, res.LossAfter)
	t := newTable(w, reports.FormatTable)
	t.Header("field", "before", "after")
	keys := make([]string, 0, len(res.Values))
	for k := range res.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		before, _ := calibrate.FieldValue(base, k)
		_ = t.Append(k, num(before), num(res.Values[k]))
	}
	if err := t.Render(); err != nil {
		return nil, "", err
	}
	fmt.Fprintln(w)
	t = newTable(w, reports.FormatTable)
	t.Header("run", "metric", "measured", "before", "error", "after", "error")
	for i := range res.Before {
		for _, key := range calibrate.TargetMetrics {
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
	p := calibrate.ProfileOf(res.Config, src)
	p.Fit = map[string]float64{"loss_before": res.LossBefore, "loss_after": res.LossAfter}
	return p, "itlsim calibrate: fitted to " + src + " with the simulation in the loop", nil
}

func (o *calibrateOptions) fitSteps(w io.Writer, base sim.Config) (*calibrate.Profile, string, error) {
	steps, notes, err := calibrate.ReadSteps(o.steps, calibrate.Select{Model: base.Model, GPU: base.GPU, TP: base.TP})
	if err != nil {
		return nil, "", err
	}
	if o.worst < 0 {
		return nil, "", fmt.Errorf("--worst: must be ≥ 0, got %d", o.worst)
	}
	p := &calibrate.Profile{Model: base.Model, GPU: base.GPU, TP: base.TP, Source: "step timings " + o.steps}
	var m cost.Model
	switch o.costModel {
	case "linear":
		c, err := calibrate.FitLinear(steps)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", o.steps, err)
		}
		p.Cost = calibrate.ProfileCost{Model: "linear", Linear: &c}
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
		c, err := calibrate.FitRoofline(setup.Model, setup.GPU, base.TP, base.Cost.Roofline, steps)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", o.steps, err)
		}
		p.Cost = calibrate.ProfileCost{Model: "roofline", Roofline: &c}
		if m, err = cost.NewRoofline(setup.Model, setup.GPU, base.TP, c); err != nil {
			return nil, "", err
		}
		fmt.Fprintf(w, "roofline of %s on %d × %s fitted to %d steps: compute_efficiency %.3f, memory_efficiency %.3f, overhead_us %.1f, seq_overhead_us %.2f, kernel_overhead_us %.2f\n",
			setup.Model.Name, base.TP, setup.GPU.Name, len(steps), c.ComputeEfficiency, c.MemoryEfficiency, c.OverheadUS, c.SeqOverheadUS, c.KernelOverheadUS)
	default:
		return nil, "", fmt.Errorf("--fit-model: must be linear or roofline, got %q", o.costModel)
	}
	q := calibrate.Quality(m, steps, o.worst)
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
	return p, "itlsim calibrate --steps " + o.steps + ": fitted " + o.costModel + " model", nil
}
