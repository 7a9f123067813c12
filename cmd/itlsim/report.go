package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/ingest"
)

type reportOptions struct {
	temps     *tempFiles
	out       string
	echartsJS string
	title     string
}

func newReportCmd(temps *tempFiles) *cobra.Command {
	o := &reportOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Write one self-contained HTML report comparing every run of the given --json results",
		Long: `Read one or more documents written by 'itlsim run --json' and write one HTML
page comparing all their runs: the scenario in words, the summary table, and
charts of ITL over time and by token position, the distribution of per-stream
p99 ITL against θ, jitter ratios, stall time by cause, the worst streams'
timelines, KV cache and queue over time, TTFT and E2EL, and goodput. Every
chart's numbers are also in plain tables.

The charts are drawn by ECharts. --echarts-js FILE inlines that build (for
example package/dist/echarts.min.js from 'npm pack echarts@5') so the page
draws offline; without it the page loads ECharts from
` + reporthtml.CDNURL + `
and needs the network for its charts (the tables never do).

  itlsim run --policy chunked,prefill-first --json result.json
  itlsim report result.json -o report.html --echarts-js echarts.min.js`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "write the page to this file (default: stdout)")
	f.StringVar(&o.echartsJS, "echarts-js", "", "ECharts build to inline (echarts.min.js) so the page draws offline")
	f.StringVar(&o.title, "title", "", `page title (default "itlsim report")`)
	return cmd
}

func (o *reportOptions) run(cmd *cobra.Command, args []string) error {
	files := newOutputs(o.temps)
	defer files.Discard()
	h, err := newHTMLOutput(files.Add("-o", o.out), o.echartsJS)
	if err != nil {
		return err
	}
	files.Reads("RESULT.json", args...)
	files.Reads("--echarts-js", o.echartsJS)
	if err := files.Check(); err != nil {
		return err
	}
	h.opts.Title = o.title
	var docs [][]reports.Run
	for _, path := range args {
		doc, err := ingest.ReadDocument(path)
		if err != nil {
			return err
		}
		docs = append(docs, doc.Runs)
	}
	runs := reports.MergeRuns(args, docs)
	if h.out == nil {
		return reporthtml.Write(cmd.OutOrStdout(), runs, h.opts)
	}
	if err := h.write(runs); err != nil {
		return err
	}
	return files.Commit()
}

// htmlOutput is an HTML report to write: its file and options, the ECharts
// build read (and checked) up front so a long run never fails at the end
// on a bad --echarts-js.
type htmlOutput struct {
	out  *outFile
	opts reporthtml.Options
}

// newHTMLOutput plans the report to out (report's stdout: nil).
func newHTMLOutput(out *outFile, echartsJS string) (*htmlOutput, error) {
	h := &htmlOutput{out: out}
	if echartsJS == "" {
		return h, nil
	}
	js, err := os.ReadFile(echartsJS)
	if err != nil {
		return nil, fmt.Errorf("--echarts-js: %w", err)
	}
	if err := reporthtml.CheckECharts(js); err != nil {
		return nil, fmt.Errorf("--echarts-js %s: %w", echartsJS, err)
	}
	h.opts.ECharts = js
	return h, nil
}

// write writes the report of runs to its file (committed with the others).
func (h *htmlOutput) write(runs []reports.Run) error {
	return h.out.Write(func(f *os.File) error { return reporthtml.Write(f, runs, h.opts) })
}
