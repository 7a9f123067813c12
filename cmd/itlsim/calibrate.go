package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/calibrate"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/sim"
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
	quiet     bool
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
print the errors before and after. Without --fit, the front end's serial
work per prompt token and per request and its detokenization per output
token join the fit where the runs separate each from step time: moving it
must move the target figures by 0.5 % RMS or more, and at least 20 % of that
movement must be one no combination of the other fitted fields makes (an
independence of 0.2, a variance inflation of at most 25). Otherwise it is
held, and calibrate prints "front end: not separable from step time on this
data (why)". A front-end field given by a flag, --set, the scenario or a
profile is held as given.

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
	f.StringSliceVar(&o.fit, "fit", nil, "with measured runs: fields to fit (default: "+strings.Join(calibrate.DefaultTuned, ",")+", and "+strings.Join(calibrate.FrontEndParams, ",")+" where the runs separate them from step time; +FIELD,… adds to that set)")
	f.IntVar(&o.evals, "evals", 300, "with measured runs: simulations the fit may spend")
	f.IntVar(&o.seeds, "seeds", 2, "with measured runs: arrival draws per simulation when arrivals are random")
	f.BoolVar(&o.warmCache, "warm-cache", false, "with measured runs: earlier runs' prompts start cached (see validate)")
	f.BoolVar(&o.holdOut, "leave-one-out", false, "with measured runs: fit on all runs but one and validate on the one left out, for each run; print the out-of-sample errors and write no profile")
	f.StringVarP(&o.output, "output", "o", "", "write the fitted profile (YAML) to this file")
	f.IntVar(&o.worst, "worst", 5, "with --steps: rows of largest relative error to print")
	bindQuiet(cmd, &o.quiet)
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
		return o.leaveOneOut(cmd, w, base, args)
	case o.steps != "":
		prof, comment, err = o.fitSteps(w, base)
	default:
		prof, comment, err = o.tune(cmd, w, base, args)
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
func (o *calibrateOptions) measured(cmd *cobra.Command, base sim.Config, args []string) ([]ingest.Recording, calibrate.TuneOptions, *progress.Line, error) {
	in, err := ingest.ParseFormat(o.input)
	if err != nil {
		return nil, calibrate.TuneOptions{}, nil, fmt.Errorf("--input-format: %w", err)
	}
	if o.seeds < 1 || o.seeds > 100 {
		return nil, calibrate.TuneOptions{}, nil, fmt.Errorf("--seeds: must be in [1, 100], got %d", o.seeds)
	}
	if o.evals < 1 || o.evals > 10000 {
		return nil, calibrate.TuneOptions{}, nil, fmt.Errorf("--evals: must be in [1, 10000], got %d", o.evals)
	}
	recs, err := ingest.ReadFiles(args, in)
	if err != nil {
		return nil, calibrate.TuneOptions{}, nil, err
	}
	// --fit +FIELD,… fits those beside the default set.
	params, extra, err := calibrate.SplitFit(o.fit)
	if err != nil {
		return nil, calibrate.TuneOptions{}, nil, err
	}
	line := progressLine(cmd, "calibrate", o.quiet)
	return recs, calibrate.TuneOptions{Params: params, Extra: extra, Evals: o.evals, Progress: progress.Counter(line, "simulations"),
		FrontEnd: len(params) == 0, Hold: o.heldFrontEnd(cmd, base),
		Validate: calibrate.Options{Seeds: o.seeds, WarmCache: o.warmCache}}, line, nil
}

// heldFrontEnd are the front-end fields the user set, by a flag or --set,
// or by the scenario or a profile (calibrate.HeldFrontEnd).
func (o *calibrateOptions) heldFrontEnd(cmd *cobra.Command, base sim.Config) []string {
	return calibrate.HeldFrontEnd(base, func(p string) bool {
		for _, s := range shorthands {
			if s.Path == p && cmd.Flags().Changed(s.Flag) {
				return true
			}
		}
		for _, kv := range o.run.sets {
			if strings.HasPrefix(kv, p+"=") {
				return true
			}
		}
		return false
	})
}

// leaveOneOut prints, for each measured run, the errors of a fit made on
// the other runs: the fidelity a user can expect on a run nobody fitted.
func (o *calibrateOptions) leaveOneOut(cmd *cobra.Command, w io.Writer, base sim.Config, args []string) error {
	recs, opt, line, err := o.measured(cmd, base, args)
	if err != nil {
		return err
	}
	hs, err := calibrate.LeaveOneOut(base, recs, opt)
	line.Done()
	if err != nil {
		return err
	}
	return calibrate.WriteLeaveOneOut(w, hs, len(recs), o.evals)
}

func (o *calibrateOptions) tune(cmd *cobra.Command, w io.Writer, base sim.Config, args []string) (*calibrate.Profile, string, error) {
	recs, opt, line, err := o.measured(cmd, base, args)
	if err != nil {
		return nil, "", err
	}
	defer line.Done()
	return calibrate.TuneReport(line.ClearOnWrite(w), base, recs, opt)
}

func (o *calibrateOptions) fitSteps(w io.Writer, base sim.Config) (*calibrate.Profile, string, error) {
	return calibrate.FitStepsReport(w, base, o.steps, o.costModel, o.worst)
}
