package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/benchalias"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/calibrate"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// shorthands are the flags that set one scenario field each
// (scenario.Shorthands).
var shorthands = scenario.Shorthands

type runOptions struct {
	temps         *tempFiles
	values        map[string]*string // shorthand flag → value
	maxMemory     maxMemory          // --max-memory
	sets          []string
	vary          []string
	format        string
	jsonPath      string
	streamsPath   string
	summaryCSV    string
	timelinesPath string
	htmlPath      string
	echartsJS     string
	printConfig   bool
	skipBadRows   bool
	slo           sloFlags
	alias         *benchalias.Flags // vLLM bench and GuideLLM names
	quiet         bool
}

func newRunCmd(temps *tempFiles) *cobra.Command {
	o := &runOptions{temps: temps, values: map[string]*string{}}
	cmd := &cobra.Command{
		Use:   "run [SCENARIO.yaml]",
		Short: "Simulate a scenario (the built-in default without a file) and print its metrics",
		Long: `Simulate a scenario and print TTFT, TPOT, E2EL, throughput and the per-stream
ITL metrics, one column per compared configuration.

Without a file, run the built-in default: Llama-3.1-8B on one H100-SXM-80GB,
chunked prefill, a chat workload at about 80 % of capacity. Flags override the
file's fields. A flag given several comma-separated values compares them: every
run sees the same requests and the same random draws, so differences come from
the compared setting alone. --vary compares any field by its YAML path:

  itlsim run --policy prefill-first,chunked
  itlsim run --vary scheduler.max_num_batched_tokens=512,2048
  itlsim run --vary "workload.input_len=fixed:512;fixed:4096"

Field paths, by section (` + "`itlsim run --print-config`" + ` prints them all with their values):
` + scenario.PathsHelp(scenario.Paths(), 80),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.bindFields(cmd, true)
	f := cmd.Flags()
	f.StringArrayVar(&o.vary, "vary", nil, "compare any field: path=v1,v2 (repeatable; separate values by ';' when they contain commas)")
	f.StringVar(&o.format, "format", "table", "stdout form: table, markdown or json")
	f.BoolVar(&o.printConfig, "print-config", false, "print each run's resolved scenario as YAML (every default filled in) and exit without simulating")
	f.StringVar(&o.jsonPath, "json", "", "write the full results (scenario, runs, streams, time series) as JSON to this file")
	f.StringVar(&o.streamsPath, "streams", "", "write one CSV row per request and run to this file")
	f.StringVar(&o.summaryCSV, "summary-csv", "", summaryCSVUsage)
	f.StringVar(&o.timelinesPath, "timelines", "", "write every request as JSON lines (itlsim's stream format) to this file: its outcome and a stream's chunk times")
	f.StringVar(&o.htmlPath, "html", "", "write the HTML report (the page itlsim report makes from --json) to this file")
	f.StringVar(&o.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js) so the report draws offline")
	o.slo.bind(cmd)
	bindQuiet(cmd, &o.quiet)
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command, args []string) error {
	format, err := stdoutFormat("format", o.format)
	if err != nil {
		return err
	}
	variants, sc, err := o.variants(cmd, args)
	if err != nil {
		return err
	}
	terms, err := o.slo.parse(sc.file, sc.terms, sc.lines)
	if err != nil {
		return err
	}

	if o.printConfig {
		return scenario.PrintConfigs(cmd.OutOrStdout(), variants)
	}

	// Every output path is checked before the simulation, which may be long.
	files := newOutputs(o.temps)
	defer files.Discard()
	outs := runOutputs{files: files, json: files.Add("--json", o.jsonPath), streams: files.Add("--streams", o.streamsPath),
		summaryCSV: files.Add("--summary-csv", o.summaryCSV), format: format}
	timelines := files.Add("--timelines", o.timelinesPath)
	if h := files.Add("--html", o.htmlPath); h != nil {
		if outs.html, err = newHTMLOutput(h, o.echartsJS); err != nil {
			return err
		}
	}
	files.Reads("SCENARIO", args...)
	files.Reads("--echarts-js", o.echartsJS)
	for _, v := range variants {
		readsConfig(files, v.Config)
	}
	if err := files.Check(); err != nil {
		return err
	}
	fileTrace := len(args) == 1 && sc.parsed.Sets("workload.trace") && !sc.setsField("workload.trace")
	if err := study.CheckTraceFlags(variants, sc.parsed, fileTrace, args, cmd.Flags().Changed); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	// JSON and CSV write each run's rows one at a time from its result;
	// only the HTML report needs them all at once.
	needStreams := outs.html != nil
	line := progressLine(cmd, "run", o.quiet)
	runs, err := study.RunVariants(variants, needStreams, timelines, line)
	if err != nil {
		return err
	}
	if line != nil {
		fmt.Fprintf(stderr, "simulated %d run(s) in %.2f s wall time\n", len(runs), line.Done().Seconds())
	}
	reports.NoteIdentical(stderr, runs)
	slo.Judge(runs, terms)
	if n := runs[0].Summary.SkippedRows; n > 0 {
		fmt.Fprintf(stderr, "itlsim: skipped %d malformed row(s) of %s (--skip-bad-rows)\n", n, runs[0].Config.Workload.Trace)
	}

	return outs.write(cmd.OutOrStdout(), runs)
}

// fieldFlag is the value of a flag that sets a scenario field: the text
// given, checked when it is set on the scenario (so that a list compares
// and a duration takes a unit). Its Type is the field's, for --help.
type fieldFlag struct {
	p   *string
	typ string
}

func (f *fieldFlag) String() string     { return *f.p }
func (f *fieldFlag) Set(s string) error { *f.p = s; return nil }
func (f *fieldFlag) Type() string       { return f.typ }

// bindField defines a flag that sets the field at path into p, shown in
// --help with the field's type and its value in defaults.
func bindField(f *pflag.FlagSet, p *string, name, path, usage string, defaults sim.Config) {
	def, typ, _ := scenario.Field(defaults, path)
	f.Var(&fieldFlag{p: p, typ: typ}, name, usage)
	f.Lookup(name).DefValue = def
	if typ == "bool" { // --enforce-eager or --enable-expert-parallel alone means true, as in vLLM
		f.Lookup(name).NoOptDefVal = "true"
	}
}

// bindFields binds the scenario flags every command that builds runs
// takes: each field shorthand but those named in skip, --set and
// --skip-bad-rows (compares: the shorthands' help says a comma list
// compares). The help shows each field's type and default.
func (o *runOptions) bindFields(cmd *cobra.Command, compares bool, skip ...string) {
	f := cmd.Flags()
	defaults := sim.DefaultConfig()
	bindMaxMemory(cmd, &o.maxMemory)
	if o.values == nil {
		o.values = map[string]*string{}
	}
	for _, s := range shorthands {
		if slices.Contains(skip, s.Flag) {
			continue
		}
		usage := s.Usage
		if s.List && compares {
			usage += " (comma list compares)"
		}
		// The flag holds text (a list compares, a duration takes a unit);
		// its type and default in --help are the field's.
		o.values[s.Flag] = new(string)
		bindField(f, o.values[s.Flag], s.Flag, s.Path, usage, defaults)
	}
	f.StringArrayVar(&o.sets, "set", nil, "set any field: path=value (repeatable), e.g. --set cost.roofline.overhead_us=3000")
	f.BoolVar(&o.skipBadRows, "skip-bad-rows", false, "pass over malformed trace rows instead of stopping at the first (the count is reported)")
	o.alias = benchalias.Bind(cmd, skip)
}

// singleScenario are run's scenario flags for the commands that run one
// configuration (serve, record): the same fields, files and rules.
type singleScenario struct{ o runOptions }

func (sf *singleScenario) bind(cmd *cobra.Command, compares bool) { sf.o.bindFields(cmd, compares) }

// loadOne builds the one configuration the command line describes; a
// comparison is an error.
func (sf *singleScenario) loadOne(cmd *cobra.Command, args []string) (sim.Config, error) {
	return singleConfig(cmd, &sf.o, args, func(vs []scenario.Variant) error {
		what := fmt.Sprintf("%d runs", len(vs))
		if len(vs[0].Overrides) > 0 {
			what = vs[0].Overrides[0].Path
		}
		return fmt.Errorf("%s compares configurations; %s runs one (give each flag one value)", what, cmd.Name())
	})
}

// singleConfig is the one configuration o and args describe; compared is
// the error when they describe several.
func singleConfig(cmd *cobra.Command, o *runOptions, args []string, compared func([]scenario.Variant) error) (sim.Config, error) {
	vs, _, err := o.variants(cmd, args)
	if err != nil {
		return sim.Config{}, err
	}
	if len(vs) != 1 {
		return sim.Config{}, compared(vs)
	}
	return vs[0].Config, nil
}

// scenarioFile is what a scenario file said beside its configuration: its
// SLO terms and their lines, for messages.
type scenarioFile struct {
	file  string
	terms []string
	lines []int
	// parsed is the file as read (zero without one); setsField tells
	// whether the command line sets or compares a field.
	parsed    scenario.File
	setsField func(path string) bool
}

// variants builds the runs the command line asks for: the scenario file (or
// the default), the field flags and --set, the comparisons, and a cost
// profile (cost.profile, --profile) applied under what the command line sets.
func (o *runOptions) variants(cmd *cobra.Command, args []string) ([]scenario.Variant, scenarioFile, error) {
	if err := o.alias.Apply(cmd, &o.sets); err != nil {
		return nil, scenarioFile{}, err
	}
	o.alias = nil // applied once: a command may build its variants again
	cl := scenario.CommandLine{Files: hostFS{}, Sets: o.sets, Vary: o.vary, SkipBadRows: o.skipBadRows,
		ApplyProfile: calibrate.ApplyProfile}
	file := ""
	if len(args) == 1 {
		data, err := os.ReadFile(args[0])
		if err != nil {
			return nil, scenarioFile{}, err
		}
		file, cl.Path, cl.Data = args[0], args[0], data
	}
	for _, s := range shorthands {
		// A command may leave a field flag out (sweep sets the rate itself
		// and has a --rate of its own).
		if _, ok := o.values[s.Flag]; !ok || !cmd.Flags().Changed(s.Flag) {
			continue
		}
		cl.Fields = append(cl.Fields, scenario.FieldValue{Flag: s.Flag, Path: s.Path, Value: *o.values[s.Flag], List: s.List})
	}
	cl.Adjust = func(base *sim.Config, setBy map[string]string) error {
		if len(o.slo.goodput) > 0 {
			for path, by := range setBy {
				if strings.HasPrefix(path, "metrics.slo.") && strings.HasPrefix(by, "--set") {
					return fmt.Errorf("--goodput and %s both set SLO limits: give one of them", by)
				}
			}
		}
		return o.slo.applyGoodput(cmd, &base.Metrics)
	}
	built, err := scenario.Build(cl)
	if err != nil {
		return nil, scenarioFile{}, err
	}
	variants, parsed := built.Variants, built.File
	// Every file the runs read is an input of the invocation: no output of
	// any command that built them may replace one.
	o.temps.Reads("SCENARIO", file)
	for i, v := range variants {
		readsConfig(o.temps, v.Config)
		variants[i].Config.MaxMemoryBytes = int64(o.maxMemory)
	}
	return variants, scenarioFile{file, parsed.SLO, parsed.SLOLines, parsed, built.SetsField}, nil
}

func writeJSON(w io.Writer, v any) error {
	if doc, ok := v.(reports.Document); ok {
		return reports.WriteJSON(w, doc) // streams rows, byte-identical
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
