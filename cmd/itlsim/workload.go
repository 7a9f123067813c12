package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

func newWorkloadCmd(temps *tempFiles) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Inspect a trace or a scenario's workload, or write it as a trace",
	}
	cmd.AddCommand(newWorkloadInspectCmd(), newWorkloadGenerateCmd(temps))
	return cmd
}

// sourceOptions are the flags that say which requests a workload command
// reads: a trace file or a scenario's workload, transformed.
type sourceOptions struct {
	format     string // --workload-format (or its old spelling --format)
	seed       string
	timeScale  string
	window     string
	sample     string
	targetRate string
	capTokens  string
	sets       []string
}

func (o *sourceOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.format, "workload-format", "", "trace format: "+strings.Join(workloads.Formats(), ", ")+" (default: detected from the file)")
	// The old spelling: --format names stdout's form in run, gate, analyze
	// and replay, so a trace's format is --workload-format, as in run.
	f.StringVar(&o.format, "format", "", "the old spelling of --workload-format")
	_ = f.MarkHidden("format")
	d := sim.DefaultConfig()
	bindField(f, &o.seed, "seed", "seed", "seed of the generated or sampled requests (a scenario's own by default)", d)
	bindField(f, &o.timeScale, "time-scale", "workload.time_scale", "divide arrival times by this (2 replays twice as fast; 0: as recorded)", d)
	bindField(f, &o.window, "window", "workload.window_s", "keep requests arriving in START,END seconds of the source, shifted to start at 0", d)
	bindField(f, &o.sample, "sample", "workload.sample", "keep each request with this probability (0: all)", d)
	bindField(f, &o.targetRate, "target-rate", "workload.target_rate", "rescale time to this mean rate, requests/s (0: off)", d)
	bindField(f, &o.capTokens, "cap-tokens", "workload.cap_tokens", "cap prompt + output at this many tokens (0: no cap)", d)
	f.StringArrayVar(&o.sets, "set", nil, "set any scenario field: path=value (repeatable), e.g. --set workload.rate=8")
}

// open returns the requests of source — a scenario file (.yaml, .yml) or a
// trace — exactly as `itlsim run` would simulate them: the same resolved
// configuration and the same workload seed.
func (o *sourceOptions) open(cmd *cobra.Command, source string) (workloads.Source, sim.Config, error) {
	cfg, err := o.config(cmd, source)
	if err != nil {
		return nil, cfg, err
	}
	src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
	if err != nil {
		return nil, cfg, err
	}
	return src, cfg, nil
}

// config returns the resolved configuration whose workload open reads,
// without reading the workload's files.
func (o *sourceOptions) config(cmd *cobra.Command, source string) (sim.Config, error) {
	cfg := sim.DefaultConfig()
	isScenario := false
	switch strings.ToLower(filepath.Ext(source)) {
	case ".yaml", ".yml":
		isScenario = true
		data, err := os.ReadFile(source)
		if err != nil {
			return cfg, err
		}
		f, err := scenario.Parse(source, data)
		if err != nil {
			return cfg, err
		}
		cfg = f.Config
		// Files a scenario names are relative to the scenario.
		dir := filepath.Dir(source)
		cfg.Workload = cfg.Workload.ResolvePaths(dir)
		if m := cfg.Model; strings.HasSuffix(m, ".json") && !filepath.IsAbs(m) {
			cfg.Model = filepath.Join(dir, m)
		}
	default:
		cfg.Workload.Trace = source
	}
	flagName := "workload-format"
	if cmd.Flags().Changed("format") {
		if cmd.Flags().Changed("workload-format") {
			return cfg, fmt.Errorf("--format is the old spelling of --workload-format: give one of them")
		}
		flagName = "format"
		fmt.Fprintf(cmd.ErrOrStderr(), "itlsim: note: --format %s is spelled --workload-format %s now (as in run; --format names stdout's form)\n", o.format, o.format)
	}
	for _, s := range []struct{ flag, path, value string }{
		{flagName, "workload.format", o.format},
		{"seed", "seed", o.seed},
		{"time-scale", "workload.time_scale", o.timeScale},
		{"window", "workload.window_s", o.window},
		{"sample", "workload.sample", o.sample},
		{"target-rate", "workload.target_rate", o.targetRate},
		{"cap-tokens", "workload.cap_tokens", o.capTokens},
	} {
		if !cmd.Flags().Changed(s.flag) {
			continue
		}
		if s.flag == flagName && isScenario && cfg.Workload.Trace == "" {
			return cfg, fmt.Errorf("--%s: %s generates its requests; --%s applies to a trace", flagName, source, flagName)
		}
		if err := scenario.Set(&cfg, s.path, s.value); err != nil {
			return cfg, fmt.Errorf("--%s: %w", s.flag, err)
		}
	}
	if err := scenario.ApplySets(&cfg, o.sets); err != nil {
		return cfg, err
	}
	cfg.Files = hostFS{}
	setup, err := cfg.Resolve()
	if err != nil {
		return cfg, err
	}
	return setup.Config, nil
}

func newWorkloadInspectCmd() *cobra.Command {
	var o sourceOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect SOURCE",
		Short: "Print a workload's count, duration, rate, burstiness and length percentiles",
		Long: `Print what a workload holds: the number of requests, the span of their
arrivals, the mean rate, the burstiness (coefficient of variation of the
inter-arrival gaps: 0 evenly spaced, 1 Poisson, above 1 bursty) and the
percentiles of prompt and output lengths, per class when the requests have
classes, and the prefix block ids they carry.

SOURCE is a trace (its format detected from its name and first line, or
given with --workload-format) or a scenario file (.yaml), whose workload is generated
exactly as 'itlsim run' would generate it. The transformation flags apply to
either:

  itlsim workload inspect ../shared/data/traces/AzureLLMInferenceTrace_conv_2023.csv
  itlsim workload inspect trace.jsonl --window 600,1200 --time-scale 2
  itlsim workload inspect scenario.yaml --set workload.rate=8`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, cfg, err := o.open(cmd, args[0])
			if err != nil {
				return err
			}
			s, err := reports.InspectWorkload(args[0], src, cfg.Workload)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			return s.Write(cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}

func newWorkloadGenerateCmd(temps *tempFiles) *cobra.Command {
	var o sourceOptions
	var out string
	cmd := &cobra.Command{
		Use:   "generate SOURCE -o FILE",
		Short: "Write a scenario's workload (or a transformed trace) as a trace in itlsim's request format",
		Long: `Write the requests of SOURCE — a scenario file's generated workload, or a
trace — to FILE in itlsim's request format: JSON lines, or CSV when FILE
ends in .csv. The file replays with 'itlsim run --workload FILE' to the same
requests (arrivals to the nanosecond, lengths, classes, priorities, prefix
block ids). The file is written to a temporary name and renamed, so a failed
run leaves no partial file.

  itlsim workload generate scenario.yaml -o requests.jsonl
  itlsim workload generate mooncake.jsonl --window 0,600 -o first-10-minutes.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o FILE: required")
			}
			files := newOutputs(temps)
			defer files.Discard()
			file := files.Add("-o", out)
			cfg, err := o.config(cmd, args[0])
			if err != nil {
				return err
			}
			files.Reads("SOURCE", args[0])
			readsConfig(files, cfg)
			if err := files.Check(); err != nil {
				return err
			}
			src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
			if err != nil {
				return err
			}
			var n int
			err = file.Write(func(f *os.File) error {
				var werr error
				n, werr = workloads.WriteRequests(workloads.NewRequestWriterFor(f, out), src)
				return werr
			})
			if err != nil {
				return err
			}
			if err := files.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d requests to %s\n", n, out)
			return nil
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (.jsonl, or .csv for CSV)")
	return cmd
}
