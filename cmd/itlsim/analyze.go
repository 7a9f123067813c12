package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
)

// metricFlags binds the thresholds measured streams are judged by.
type metricFlags struct {
	m           sim.MetricsConfig
	percentiles string
}

// config returns the thresholds with --percentiles applied, validated.
func (mf *metricFlags) config() (sim.MetricsConfig, error) {
	m := mf.m
	if mf.percentiles != "" {
		ps, err := sim.ParsePercentiles(mf.percentiles)
		if err != nil {
			return m, fmt.Errorf("--percentiles: %w", err)
		}
		m.Percentiles = ps
	}
	return m, m.Validate()
}

func (mf *metricFlags) bind(cmd *cobra.Command) {
	mf.m = sim.DefaultConfig().Metrics
	f := cmd.Flags()
	f.Var(newMS(&mf.m.StallThresholdMS), "stall-threshold", "gaps above this are stalls, ms or with a unit (250ms, 1s)")
	f.Var(newMS(&mf.m.ITLGoodputMS), "itl-goodput", "ITL goodput threshold θ, ms or with a unit")
	f.Float64Var(&mf.m.UnstableJitter, "unstable-jitter", mf.m.UnstableJitter, "a stream whose p99/p50 gap ratio exceeds this is unstable")
	f.Var(newMS(&mf.m.SLO.TTFTMS), "slo-ttft", "TTFT limit for SLO goodput, ms or with a unit (2s); 0: none")
	f.Var(newMS(&mf.m.SLO.TPOTMS), "slo-tpot", "TPOT limit for SLO goodput, ms or with a unit; 0: none")
	f.Var(newMS(&mf.m.SLO.E2ELMS), "slo-e2el", "E2EL limit for SLO goodput, ms or with a unit; 0: none")
	f.StringVar(&mf.percentiles, "percentiles", "", "percentiles shown in tables, the JSON summary and gate metric names (default "+mf.m.Percentiles.String()+")")
}

type analyzeOptions struct {
	temps *tempFiles
	measuredFlags
	metrics     metricFlags
	slo         sloFlags
	streamsPath string
	htmlPath    string
	echartsJS   string
}

func newAnalyzeCmd(temps *tempFiles) *cobra.Command {
	o := &analyzeOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Compute the per-stream ITL metrics of measured streams (vLLM, AIPerf, GuideLLM, itlsim stream files)",
		Long: `Read streams measured by a benchmark tool and print the same table and JSON
as a simulation, one run per file (or per run of a file), so measured and
simulated results compare directly. The metrics are computed by the same code
as a simulation's; pooled ITL percentiles are exact (every gap is kept).

Formats, detected from the content or forced with --input-format (--format
picks stdout's form: table, markdown or json):
  vllm      vLLM benchmark results (benchmark_serving.py --save-result,
            vllm bench serve --save-result): ttfts, itls, output_lens, errors
  aiperf    AIPerf profile_export.jsonl: metrics.ttft,
            metrics.inter_chunk_latency, error records
  guidellm  GuideLLM benchmark JSON: first and last token times only, so
            per-gap metrics cannot be computed (shown as n/a)
  itlsim    itlsim's stream format, as itlsim run --timelines writes it

Failed requests (errors) count in "arrived" and as failed, never as streams.
What a file lacks (no latencies, no start times, no gaps) is said under the
table and in the JSON's runs[].source.notes.

  itlsim analyze serving_qps_16.json profile_export.jsonl
  itlsim run --timelines sim.jsonl && itlsim analyze sim.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.measuredFlags.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.streamsPath, "streams", "", "write one CSV row per request and run to this file")
	f.StringVar(&o.htmlPath, "html", "", "write the HTML report to this file")
	f.StringVar(&o.echartsJS, "echarts-js", "", "with --html: ECharts build to inline (echarts.min.js) so the report draws offline")
	o.metrics.bind(cmd)
	o.slo.bind(cmd)
	return cmd
}

func (o *analyzeOptions) run(cmd *cobra.Command, args []string) error {
	in, out, err := o.formats(cmd)
	if err != nil {
		return err
	}
	m, err := o.metrics.config()
	if err != nil {
		return err
	}
	if err := o.slo.applyGoodput(cmd, &m); err != nil {
		return err
	}
	terms, err := o.slo.parse("", nil, nil)
	if err != nil {
		return err
	}
	files := newOutputs(o.temps)
	defer files.Discard()
	outs := runOutputs{files: files, json: files.Add("--json", o.jsonPath), streams: files.Add("--streams", o.streamsPath),
		summaryCSV: files.Add("--summary-csv", o.summaryCSV), format: out}
	if h := files.Add("--html", o.htmlPath); h != nil {
		if outs.html, err = newHTMLOutput(h, o.echartsJS); err != nil {
			return err
		}
	}
	files.Reads("FILE", args...)
	files.Reads("--echarts-js", o.echartsJS)
	if err := files.Check(); err != nil {
		return err
	}
	recs, err := ingest.ReadFiles(args, in)
	if err != nil {
		return err
	}
	runs := ingest.Runs(recs, m, true)
	slo.Judge(runs, terms)
	return outs.write(cmd.OutOrStdout(), runs)
}
