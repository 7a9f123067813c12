package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/calibrate"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

type validateOptions struct {
	run       *runOptions
	scenario  string
	input     string
	seeds     int
	warmCache bool
	sens      bool
}

func newValidateCmd(temps *tempFiles) *cobra.Command {
	o := &validateOptions{run: &runOptions{temps: temps, values: map[string]*string{}}}
	cmd := &cobra.Command{
		Use:   "validate MEASURED... [scenario flags]",
		Short: "Simulate exactly the requests of measured runs and compare the figures",
		Long: `Simulate the requests of each measured run (vLLM bench results, AIPerf,
GuideLLM, itlsim streams) under the scenario the flags and --scenario describe,
and print measured against simulated TTFT, TPOT, pooled ITL and E2EL
p50/p90/p99, per-stream p99 ITL p50/p90 and throughput, with signed errors
(simulated/measured − 1).

Lengths come from the file. Arrivals come from its start times when it has
them; otherwise from its schedule: Poisson at its rate over --seeds draws
(median shown, min–max beside), all at t=0 for rate "inf", a closed loop for a
concurrency limit; GuideLLM's strategies map one by one (synchronous and
concurrent: closed loop; throughput: all at once; constant; poisson). The
scenario's workload section is not used.

--warm-cache starts each run with the prompts of the runs before it in the
list cached, as when the runs were made back to back on one server with
prefix caching on (prompts are matched by position and length).

--sensitivity reruns every run with the same seeds and step times 2 % shorter
and 2 % longer, and gives each figure its elasticity to step time (% per %,
column "sensitivity %/%", JSON sensitivity_pct_per_pct); a figure that moves
more than 5 % per 1 % of step time gets a "fragile:" note. Beside it, one
column per front-end constant that is not 0 (serial work per prompt token
and per request, fixed latency, hand-off, detokenization in the engine)
gives the elasticity to that constant alone (JSON
frontend_sensitivity_pct_per_pct, by field path), two more simulations each.
It triples the simulations or more, so it is off by default.

  itlsim validate qps_01.json qps_04.json --model llama-3.3-70b --gpu a100-40gb --tp 8 --warm-cache`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.validate(cmd, args)
		},
	}
	f := cmd.Flags()
	o.run.bindFields(cmd, false)
	f.StringVar(&o.scenario, "scenario", "", "scenario file the measured runs were served under (flags override it)")
	f.StringVar(&o.input, "input-format", "auto", "format of the measured files: auto, "+strings.Join(ingest.Formats(), ", "))
	f.IntVar(&o.seeds, "seeds", calibrate.DefaultOptions().Seeds, "arrival draws to simulate when arrivals are random (Poisson at the file's rate)")
	f.BoolVar(&o.warmCache, "warm-cache", false, "start each run with the earlier runs' prompts in the prefix cache (runs made back to back)")
	f.BoolVar(&o.sens, "sensitivity", false, "rerun with step times ±2 % and each front-end constant ±2 %, and give each figure's elasticity to each (% per %); triples the simulations or more")
	f.StringVar(&o.run.format, "format", "table", "stdout form: table, markdown or json")
	f.StringVar(&o.run.jsonPath, "json", "", "write the comparison as JSON to this file")
	f.StringVar(&o.run.htmlPath, "html", "", "write an HTML report with each measured run beside its simulation")
	f.StringVar(&o.run.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js)")
	return cmd
}

func (o *validateOptions) validate(cmd *cobra.Command, args []string) error {
	format, err := stdoutFormat("format", o.run.format)
	if err != nil {
		return err
	}
	if o.seeds < 1 || o.seeds > 1000 {
		return fmt.Errorf("--seeds: must be in [1, 1000], got %d", o.seeds)
	}
	in, err := ingest.ParseFormat(o.input)
	if err != nil {
		return fmt.Errorf("--input-format: %w", err)
	}
	base, err := oneConfig(cmd, o.run, o.scenario, "validate simulates")
	if err != nil {
		return err
	}
	setup, err := base.Resolve()
	if err != nil {
		return err
	}
	files := newOutputs(o.run.temps)
	defer files.Discard()
	jsonOut := files.Add("--json", o.run.jsonPath)
	var html *htmlOutput
	if h := files.Add("--html", o.run.htmlPath); h != nil {
		if html, err = newHTMLOutput(h, o.run.echartsJS); err != nil {
			return err
		}
	}
	files.Reads("FILE", args...)
	files.Reads("--scenario", o.scenario)
	files.Reads("--echarts-js", o.run.echartsJS)
	if err := files.Check(); err != nil {
		return err
	}
	recs, err := ingest.ReadFiles(args, in)
	if err != nil {
		return err
	}
	cmps, err := calibrate.Validate(setup, recs, calibrate.Options{Seeds: o.seeds, WarmCache: o.warmCache, Sensitivity: o.sens})
	if err != nil {
		return err
	}
	doc := calibrate.ValidationDoc{Scenario: setup.Config, Runs: cmps}
	if jsonOut != nil {
		if err := jsonOut.Write(func(f *os.File) error { return writeJSON(f, doc) }); err != nil {
			return err
		}
	}
	if html != nil {
		html.opts.Finding = calibrate.Finding(cmps)
		if err := html.write(calibrate.SideBySide(cmps, setup.Config)); err != nil {
			return err
		}
	}
	if err := files.Commit(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if format == reports.FormatJSON {
		return writeJSON(w, doc)
	}
	return calibrate.WriteValidation(w, cmps, format)
}

// oneConfig is the single configuration the scenario flags (and the
// --scenario file, when given) describe for a command that simulates
// measured runs; what says what the command does with it, for the error
// a comparison gets ("validate simulates").
func oneConfig(cmd *cobra.Command, run *runOptions, scenarioFile, what string) (sim.Config, error) {
	var scen []string
	if scenarioFile != "" {
		scen = []string{scenarioFile}
	}
	return singleConfig(cmd, run, scen, func(vs []scenario.Variant) error {
		return fmt.Errorf("%s one configuration; %d are compared (give each flag one value)", what, len(vs))
	})
}
