package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/gate"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
)

// Exit statuses of itlsim gate.
const (
	gateFailed   = 1 // a metric regressed
	gateBadInput = 2 // the inputs or flags are wrong
	// gateInconclusive: nothing failed, but a chosen metric could not have
	// detected a 25 % regression at the streams given (gate.PowerEffect).
	gateInconclusive = 3
)

type gateOptions struct {
	temps        *tempFiles
	metrics      metricFlags
	baseline     string
	candidate    string
	baselineRun  string
	candidateRun string
	inputFormat  string
	metricNames  []string
	tolerance    string
	opts         gate.Options
	format       string
	jsonPath     string
	htmlPath     string
	echartsJS    string
	slo          sloFlags
	class        string
}

func newGateCmd(temps *tempFiles) *cobra.Command {
	o := &gateOptions{temps: temps, opts: gate.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "gate --baseline A --candidate B | gate --candidate B --slo TERM...",
		Short: "Fail (exit 1) when the candidate's streams regress beyond a tolerance against the baseline's, or miss an SLO; exit 3 when too few streams to tell",
		Long: `Compare a candidate against a baseline, metric by metric, and fail when the
candidate is worse beyond the tolerance. A and B are results of itlsim run
--json (or itlsim analyze --json) or measured stream files (anything itlsim
analyze reads). The default metrics are held together: the p99 across streams
of each stream's p99 ITL, the p99 across streams of each stream's largest gap
(a freeze: a stream's own p99 over 200 gaps ignores its two largest), ITL
goodput (streams that never froze longer than θ, 400 ms by default) and
frozen_stream_share (streams whose largest gap exceeds the stall threshold,
250 ms by default), judged by Fisher's exact test on the two counts rather
than the bootstrap, so that a few percent of frozen streams fail at any
size. Every
comparison also holds unserved_share, the share of requests rejected or
failed, so a candidate cannot pass by serving fewer requests. A metric that
is undefined on one side (no finished stream) fails and says so.

Absolute mode: without --baseline, --slo terms judge the candidate alone,
for release rules such as "P99 TTFT must stay under 500 ms":

  itlsim gate --candidate pr.json --slo 'ttft:p99<=500ms' --slo 'itl-goodput>=99%@400ms'

--slo terms given beside a baseline are judged on the candidate as well.
--class NAME restricts both sides to one traffic class.

For each metric the change from baseline to candidate comes with a bootstrap
confidence interval: streams are resampled with replacement (--bootstrap
times, seeded by --seed) and every resample is summarized by the same code as
a run. Streams that overlap in time share the server's steps (one long prefill
stalls every stream decoding beside it), so they are resampled in blocks of
consecutive arrivals as long as the mean number of streams in flight (--block).
A metric fails only when its whole interval lies beyond the tolerance in the
bad direction, so the noise of sampling streams passes and a real regression
fails. The interval does not cover run-to-run changes of the offered load:
compare on the same requests (the same seed) or the same measured load.
Changes are relative for times and ratios and in share points for shares;
--tolerance applies to both (0.05 or 5%: 5 % slower, or 5 points less
goodput).

Power: every metric's row gives n, the streams its test used, and its MDE,
the smallest regression it detects with 80 % probability at that n. When
nothing fails but a chosen metric's MDE exceeds 25 % (25 points for shares),
the gate is inconclusive: too few streams to tell.

Exit status: 0 when every metric passes, 1 when one fails, 2 on bad input,
3 when inconclusive.
--format markdown prints a pull-request comment; --format json (or --json
FILE) is for machines.

  itlsim gate --baseline main.json --candidate pr.json
  itlsim gate --baseline a.json --candidate b.json --metric stream_p99_itl_p99,itl_goodput,ttft_p99 --format markdown

Metrics:
` + gate.Help(),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{gateBadInput, fmt.Errorf("unexpected argument %q: give the inputs as --baseline and --candidate", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{gateBadInput, flagError(err)} })
	f := cmd.Flags()
	f.StringVar(&o.baseline, "baseline", "", "baseline: a --json result or a measured stream file (required)")
	f.StringVar(&o.candidate, "candidate", "", "candidate: a --json result or a measured stream file (required)")
	f.StringVar(&o.baselineRun, "baseline-run", "", "the baseline file's run to use when it holds several")
	f.StringVar(&o.candidateRun, "candidate-run", "", "the candidate file's run to use when it holds several")
	f.StringVar(&o.inputFormat, "input-format", "auto", "format of measured stream files: auto, "+strings.Join(ingest.Formats(), ", "))
	f.StringSliceVar(&o.metricNames, "metric", gate.DefaultMetrics, "metrics to hold, comma-separated (listed below; any percentile of a distribution, e.g. ttft_p95)")
	f.StringVar(&o.class, "class", "", "judge only the streams of this traffic class (--json results of a workload with classes)")
	f.StringVar(&o.tolerance, "tolerance", "5%", "regression allowed: a percentage (5%) or a fraction from 0 to 1 (0.05); relative for times and ratios, share points for shares")
	f.IntVar(&o.opts.Bootstrap, "bootstrap", o.opts.Bootstrap, "bootstrap resamples of streams (0: judge the point change alone)")
	f.Uint64Var(&o.opts.Seed, "seed", o.opts.Seed, "seed of the bootstrap's resampling")
	f.Float64Var(&o.opts.Confidence, "confidence", o.opts.Confidence, "coverage of the change's interval")
	f.IntVar(&o.opts.Block, "block", 0, "streams resampled together, consecutive by arrival (0: the mean number in flight; 1: independent streams; at most half the streams)")
	f.StringVar(&o.format, "format", "table", "stdout form: table, markdown or json")
	f.StringVar(&o.jsonPath, "json", "", "also write the report as JSON to this file")
	f.StringVar(&o.htmlPath, "html", "", "also write an HTML report comparing baseline and candidate to this file")
	f.StringVar(&o.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js) so the report draws offline")
	o.metrics.bind(cmd)
	o.slo.bind(cmd)
	return cmd
}

// badInput marks err as bad input (exit status 2).
func badInput(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{gateBadInput, err}
}

func (o *gateOptions) run(cmd *cobra.Command) error {
	terms, err := o.slo.parse("", nil, nil)
	if err != nil {
		return badInput(err)
	}
	if o.candidate == "" {
		return badInput(errors.New("--candidate is required (with --baseline to compare, or with --slo terms alone)"))
	}
	if o.baseline == "" && len(terms) == 0 {
		return badInput(errors.New("--baseline is required unless --slo terms judge the candidate alone"))
	}
	if o.baseline == "" && cmd.Flags().Changed("metric") {
		return badInput(errors.New("--metric compares against a baseline: give --baseline, or state limits with --slo"))
	}
	format := reports.Format(o.format)
	switch format {
	case reports.FormatTable, reports.FormatMarkdown, reports.FormatJSON:
	default:
		return badInput(fmt.Errorf("--format: must be table, markdown or json, got %q", o.format))
	}
	in, err := ingest.ParseFormat(o.inputFormat)
	if err != nil {
		return badInput(fmt.Errorf("--input-format: %w", err))
	}
	if o.opts.Tolerance, err = gate.ParseTolerance(o.tolerance); err != nil {
		return badInput(err)
	}
	o.opts.Metrics = nil
	for _, n := range o.metricNames {
		if n = strings.TrimSpace(n); n != "" {
			o.opts.Metrics = append(o.opts.Metrics, n)
		}
	}
	if err := o.opts.Validate(); err != nil {
		return badInput(fmt.Errorf("--%s", err))
	}
	files := newOutputs(o.temps)
	defer files.Discard()
	jsonOut := files.Add("--json", o.jsonPath)
	var html *htmlOutput
	if h := files.Add("--html", o.htmlPath); h != nil {
		if html, err = newHTMLOutput(h, o.echartsJS); err != nil {
			return badInput(err)
		}
		html.opts.Title = "itlsim gate: baseline against candidate"
	}
	files.Reads("--baseline", o.baseline)
	files.Reads("--candidate", o.candidate)
	files.Reads("--echarts-js", o.echartsJS)
	if err := files.Check(); err != nil {
		return badInput(err)
	}

	var base *gate.Input
	if o.baseline != "" {
		if base, err = gate.LoadInput(o.baseline, o.baselineRun, "--baseline-run", in); err != nil {
			return badInput(err)
		}
	}
	cand, err := gate.LoadInput(o.candidate, o.candidateRun, "--candidate-run", in)
	if err != nil {
		return badInput(err)
	}
	side := base
	if side == nil {
		side = cand // absolute mode: the thresholds are the candidate's
	}
	m, err := gate.Thresholds(side, cand, func(m *sim.MetricsConfig) error { return o.thresholds(cmd, m) })
	if err != nil {
		return badInput(err)
	}
	if err := o.slo.applyGoodput(cmd, &m); err != nil {
		return badInput(err)
	}
	rep, err := gate.Decide(base, cand, m, terms, o.opts, o.class)
	if err != nil {
		return badInput(err)
	}
	if jsonOut != nil {
		if err := jsonOut.Write(func(f *os.File) error { return gate.Write(f, &rep, reports.FormatJSON) }); err != nil {
			return badInput(err)
		}
	}
	if html != nil {
		runs := []reports.Run{cand.Run("candidate", m)}
		if base != nil {
			runs = []reports.Run{base.Run("baseline", m), cand.Run("candidate", m)}
		}
		slo.Judge(runs, terms)
		var verdict bytes.Buffer // the page opens with the verdict the terminal prints
		if err := gate.Write(&verdict, &rep, reports.FormatMarkdown); err != nil {
			return err
		}
		html.opts.Gate = verdict.Bytes()
		if err := html.write(runs); err != nil {
			return badInput(err)
		}
	}
	if err := files.Commit(); err != nil {
		return badInput(err)
	}
	if err := gate.Write(cmd.OutOrStdout(), &rep, format); err != nil {
		return badInput(err)
	}
	switch rep.Verdict {
	case gate.Fail:
		return &exitError{gateFailed, fmt.Errorf("gate failed: %s", strings.Join(rep.Failed(), ", "))}
	case gate.Inconclusive:
		return &exitError{gateInconclusive, fmt.Errorf("gate inconclusive: too few streams to detect a %g%% regression of %s (see the mde column)",
			gate.PowerEffect*100, strings.Join(rep.Inconclusive, ", "))}
	}
	return nil
}

// thresholds applies the threshold flags given on the command line to m.
func (o *gateOptions) thresholds(cmd *cobra.Command, m *sim.MetricsConfig) error {
	return gate.OverrideThresholds(m, o.metrics.m, cmd.Flags().Changed, o.metrics.percentiles)
}
