package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim/scenario"
)

// outputFlags are the output flags sweep, capacity and merge share.
type outputFlags struct {
	format, jsonPath, csvPath, htmlPath, echartsJS string
}

func (o *outputFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&o.format, "format", "table", "stdout form: table, markdown or json")
	f.StringVar(&o.jsonPath, "json", "", "write the results (every point and the per-configuration answers) as JSON to this file")
	f.StringVar(&o.csvPath, "csv", "", "write one CSV row per point (sweep) or configuration (capacity) to this file")
	f.StringVar(&o.htmlPath, "html", "", "write an HTML page of charts and tables to this file")
	f.StringVar(&o.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js) so the page draws offline")
}

// any tells whether a file output is asked for.
func (o *outputFlags) files() bool { return o.jsonPath != "" || o.csvPath != "" || o.htmlPath != "" }

// studyFlags are the flags sweep and capacity share: the scenario, the
// workers and seeds, the measurement window and the shards.
type studyFlags struct {
	scn        *scenarioFlags
	out        outputFlags
	jobs       int
	seeds      int // parsed from seedsText by checkCommon
	seedsText  string
	autoSeeds  bool
	warmUp     string
	drain      float64
	maxExtend  int
	shardIndex int
	shardCount int
	dir        string
	k8s        k8sFlags
	quiet      bool
}

// shardFlags are not part of what a study computes: a merge or a pod's
// command is rebuilt without them.
var shardFlags = []string{"shard-index", "shard-count", "out", "emit-k8s-job", "k8s-image", "k8s-claim", "k8s-name", "k8s-storage",
	"jobs", "quiet", "format", "json", "csv", "html", "echarts-js"}

func (o *studyFlags) bind(cmd *cobra.Command, temps *tempFiles, defaultSeeds int) {
	f := cmd.Flags()
	o.scn = addScenarioFlags(cmd, temps, "rate")
	o.out.bind(f)
	f.IntVarP(&o.jobs, "jobs", "j", 0, "simulations run at once (0: every core); the output does not depend on it")
	seedsHelp := "seeds per point: the scenario's seed and the next ones"
	if cmd.Name() == "capacity" {
		seedsHelp = "seeds per configuration (the scenario's seed and the next ones), or auto: 3, then more until the interval of max_rate is within --precision"
	}
	f.StringVar(&o.seedsText, "seeds", strconv.Itoa(defaultSeeds), seedsHelp)
	f.StringVar(&o.warmUp, "warm-up", "auto", "warm-up left out of the metrics: auto (MSER-5 on the backlog) or a share of the arrival span in [0, 0.9]")
	f.IntVar(&o.maxExtend, "max-extend", study.DefaultWindow().MaxExtend, "a run whose steady state is not yet conclusive is rerun with twice the requests, up to this multiple of the scenario's (a power of 2, 1 to 64; 1: never)")
	f.Float64Var(&o.drain, "drain", study.DefaultWindow().Drain, "share of the arrival span at the end left out of the metrics")
	f.IntVar(&o.shardIndex, "shard-index", -1, "compute only this shard's share of the points (default: $JOB_COMPLETION_INDEX, set by a Kubernetes Indexed Job)")
	f.IntVar(&o.shardCount, "shard-count", 0, "split the points into this many shards (with --out)")
	f.StringVar(&o.dir, "out", "", "write one file per point into this directory (skipping points already there); itlsim merge DIR writes the results")
	o.k8s.bind(f)
	bindQuiet(cmd, &o.quiet)
}

// terms are the SLO terms read by variants, and their texts (part of a
// point's content key).
func (o *studyFlags) terms() (study.Terms, []string) {
	var texts []string
	for _, t := range o.scn.terms {
		texts = append(texts, t.Text)
	}
	return study.Terms(o.scn.terms), texts
}

// window is the measurement window the flags give.
func (o *studyFlags) window() study.Window {
	w := study.Window{Auto: o.warmUp == "auto", Drain: o.drain, MaxExtend: o.maxExtend}
	if !w.Auto {
		w.WarmUp, _ = strconv.ParseFloat(o.warmUp, 64) // checked by checkCommon
	}
	return w
}

// checkCommon refuses bad values of the shared flags.
func (o *studyFlags) checkCommon(cmd *cobra.Command) error {
	if o.jobs < 0 {
		return fmt.Errorf("-j: expected a worker count ≥ 1 (0: every core), got %d", o.jobs)
	}
	if o.seedsText == "auto" && cmd.Name() == "capacity" {
		o.seeds, o.autoSeeds = 3, true
	} else {
		n, err := strconv.Atoi(strings.TrimSpace(o.seedsText))
		if err != nil || n < 1 || n > 1000 {
			if cmd.Name() == "capacity" {
				return fmt.Errorf("--seeds: expected auto or 1 to 1000 seeds, got %q", o.seedsText)
			}
			return fmt.Errorf("--seeds: expected 1 to 1000 seeds, got %q", o.seedsText)
		}
		o.seeds = n
	}
	if o.warmUp != "auto" {
		if v, err := strconv.ParseFloat(o.warmUp, 64); err != nil || math.IsNaN(v) {
			return fmt.Errorf("--warm-up: expected auto or a share in [0, 0.9], got %q", o.warmUp)
		}
	}
	if _, err := stdoutFormat("format", o.out.format); err != nil {
		return err
	}
	return o.window().Validate()
}

// variants builds the configurations (and reads the SLO terms of the
// file's slo: and --slo into terms) and refuses a compared seed: the seeds
// are --seeds'.
func (o *studyFlags) variants(cmd *cobra.Command, args []string) ([]scenario.Variant, error) {
	vs, err := o.scn.variants(cmd, args)
	if err != nil {
		return nil, err
	}
	for _, ov := range vs[0].Overrides {
		if ov.Path == "seed" {
			return nil, errors.New("seed is compared: a study runs every point with --seeds K seeds from the scenario's seed; set one seed (--seed N) and K")
		}
	}
	for _, v := range vs { // an unknown preset or a bad field is refused before the first probe
		if _, err := v.Config.Resolve(); err != nil {
			if len(vs) > 1 {
				return nil, fmt.Errorf("%s: %w", v.Name, err)
			}
			return nil, err
		}
	}
	return vs, nil
}

// shard resolves --shard-index (or JOB_COMPLETION_INDEX) and
// --shard-count; count 0 means no sharding.
func (o *studyFlags) shard() (index, count int, err error) {
	if o.dir == "" {
		if o.shardCount != 0 || o.shardIndex >= 0 {
			return 0, 0, errors.New("--shard-index and --shard-count need --out DIR: each shard writes its points there for itlsim merge")
		}
		return 0, 0, nil
	}
	if o.out.files() || o.out.format != "table" {
		return 0, 0, errors.New("--out writes point files, not results: leave out --json, --csv, --html and --format, and give them to itlsim merge DIR")
	}
	env, set := os.LookupEnv("JOB_COMPLETION_INDEX")
	return study.ResolveShard(o.shardIndex, o.shardCount, env, set)
}

// studyArgs rebuilds the study's command line without the shard, worker
// and output flags: what a merge and every pod re-run to get the same
// plan. Flags come in name order, each value as --name=value.
func studyArgs(cmd *cobra.Command, args []string) []string {
	out := append([]string(nil), args...)
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if slices.Contains(shardFlags, f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

// runStudy runs a study command whose plan has one unit per key: it
// writes the Kubernetes Job with --emit-k8s; with --dir it computes this
// shard's units (one(i) for unit i) into the directory; else it computes
// every unit (all, showing its progress on line) and renders them.
func runStudy[T any](cmd *cobra.Command, args []string, st *studyFlags, temps *tempFiles, command string, keys []string,
	one func(i int) (T, error), all func(workers int, line *progress.Line) ([]T, error), render func([]T) error) error {
	if st.k8s.emit {
		return st.k8s.job.Write(cmd.OutOrStdout(), command, studyArgs(cmd, args), st.shardCount, st.dir)
	}
	index, count, err := st.shard()
	if err != nil {
		return err
	}
	workers := study.Workers(st.jobs)
	if st.dir != "" {
		dir := study.Dir{Path: st.dir}
		if err := dir.CheckDir(); err != nil {
			return err
		}
		if err := dir.PutPlan(study.Manifest{Command: command, Args: studyArgs(cmd, args), ShardCount: count}); err != nil {
			return err
		}
		return study.ComputeShard(cmd.ErrOrStderr(), progressLine(cmd, command, st.quiet), dir, keys, study.Shard(len(keys), index, count), workers, one)
	}
	if err := checkOutputs(temps, st.out); err != nil {
		return err
	}
	line := progressLine(cmd, command, st.quiet)
	units, err := all(workers, line)
	took := line.Done()
	if err != nil {
		return err
	}
	if line != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: done in %.1f s wall time\n", command, took.Seconds())
	}
	return render(units)
}

// writeStudy writes a study's outputs: the files (all or nothing), then
// stdout in the chosen form.
func writeStudy(temps *tempFiles, stdout io.Writer, o outputFlags, doc any, table func(io.Writer, reports.Format) error,
	csvOut func(io.Writer) error, htmlOut func(io.Writer, *htmlOutput) error) error {
	format, err := stdoutFormat("format", o.format)
	if err != nil {
		return err
	}
	files := newOutputs(temps)
	defer files.Discard()
	js, cs := files.Add("--json", o.jsonPath), files.Add("--csv", o.csvPath)
	var h *htmlOutput
	if hf := files.Add("--html", o.htmlPath); hf != nil {
		if h, err = newHTMLOutput(hf, o.echartsJS); err != nil {
			return err
		}
	}
	files.Reads("--echarts-js", o.echartsJS)
	if err := files.Check(); err != nil {
		return err
	}
	if js != nil {
		if err := js.Write(func(f *os.File) error { return study.WriteJSON(f, doc) }); err != nil {
			return err
		}
	}
	if cs != nil {
		if err := cs.Write(func(f *os.File) error { return csvOut(f) }); err != nil {
			return err
		}
	}
	if h != nil {
		if err := h.out.Write(func(f *os.File) error { return htmlOut(f, h) }); err != nil {
			return err
		}
	}
	if err := files.Commit(); err != nil {
		return err
	}
	if format == reports.FormatJSON {
		return study.WriteJSON(stdout, doc)
	}
	return table(stdout, format)
}

// checkOutputs checks the output paths before a long study.
func checkOutputs(temps *tempFiles, o outputFlags) error {
	files := newOutputs(temps)
	defer files.Discard()
	files.Add("--json", o.jsonPath)
	files.Add("--csv", o.csvPath)
	if hf := files.Add("--html", o.htmlPath); hf != nil {
		if _, err := newHTMLOutput(hf, o.echartsJS); err != nil {
			return err
		}
	}
	files.Reads("--echarts-js", o.echartsJS)
	return files.Check()
}
