package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
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
	f.StringVar(&o.run.format, "format", "table", "stdout form: table, markdown or json")
	f.StringVar(&o.run.jsonPath, "json", "", "write the comparison as JSON to this file")
	f.StringVar(&o.run.htmlPath, "html", "", "write an HTML report with each measured run beside its simulation")
	f.StringVar(&o.run.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js)")
	return cmd
}

// validateDoc is the JSON `itlsim validate --json` writes.
type validateDoc struct {
	Scenario sim.Config             `json:"scenario"`
	Runs     []calibrate.Comparison `json:"runs"`
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
	recs, err := readRecordings(args, in)
	if err != nil {
		return err
	}
	cmps, err := calibrate.Validate(setup, recs, calibrate.Options{Seeds: o.seeds, WarmCache: o.warmCache})
	if err != nil {
		return err
	}
	doc := validateDoc{Scenario: setup.Config, Runs: cmps}
	if jsonOut != nil {
		if err := jsonOut.Write(func(f *os.File) error { return writeJSON(f, doc) }); err != nil {
			return err
		}
	}
	if html != nil {
		if err := html.write(sideBySide(cmps, setup.Config)); err != nil {
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
	return writeValidation(w, cmps, format)
}

// sideBySide lists, per measured run, the measurement and the simulation
// of its median seed (by TTFT p50), for the HTML report.
func sideBySide(cmps []calibrate.Comparison, cfg sim.Config) []reports.Run {
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

func medianSeed(c *calibrate.Comparison) int {
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

// writeValidation prints an overview (measured / simulated and the error of
// the headline figures, one row per run), then every figure of each run.
func writeValidation(w io.Writer, cmps []calibrate.Comparison, f reports.Format) error {
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
		t.Header("metric", "measured", "simulated", "min–max", "error")
		for _, fg := range c.Figures {
			rng := num(fg.Min) + "–" + num(fg.Max)
			if fg.SimulatedNA {
				rng = "n/a"
			}
			_ = t.Append(fg.Metric, numNA(fg.Measured, fg.MeasuredNA), numNA(fg.Simulated, fg.SimulatedNA), rng, errText(fg.Error))
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
