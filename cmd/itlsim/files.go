package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// stdoutFormat checks a stdout form given with flag (--format or --output).
func stdoutFormat(flag, v string) (reports.Format, error) {
	switch f := reports.Format(v); f {
	case reports.FormatTable, reports.FormatMarkdown, reports.FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("--%s: must be table, markdown or json, got %q", flag, v)
}

// measuredFlags are the flags of the commands that read measured streams
// (analyze, replay): the files' format and where the results go.
//
// One meaning per flag name across commands: --format is stdout's form
// (as in run and gate) and --input-format the files' format (as in gate).
// The old spellings, --format for the input and --output for stdout's
// form, still work and print a note with the new one.
type measuredFlags struct {
	inputFormat string // auto or an ingest.Format
	format      string // stdout form; the old spelling of --input-format when it names one
	output      string // the old spelling of --format
	jsonPath    string
	summaryCSV  string
}

func (m *measuredFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&m.inputFormat, "input-format", "auto", "format of the files: auto, "+strings.Join(ingest.Formats(), ", "))
	f.StringVar(&m.format, "format", "table", "stdout form: table, markdown or json")
	f.StringVar(&m.output, "output", "", "the old spelling of --format")
	_ = f.MarkHidden("output")
	f.StringVar(&m.jsonPath, "json", "", "write the full results (runs, streams, time series) as JSON to this file")
	f.StringVar(&m.summaryCSV, "summary-csv", "", summaryCSVUsage)
}

// formats settles the input format and stdout's form from the flags,
// printing a note on stderr for an old spelling.
func (m *measuredFlags) formats(cmd *cobra.Command) (ingest.Format, reports.Format, error) {
	fl := cmd.Flags()
	stderr := cmd.ErrOrStderr()
	input, form, formFlag := m.inputFormat, m.format, "format"
	if fl.Changed("output") {
		if fl.Changed("format") {
			if _, err := ingest.ParseFormat(m.format); err != nil || m.format == "auto" {
				return "", "", fmt.Errorf("--output is the old spelling of --format: give one of them")
			}
		}
		fmt.Fprintf(stderr, "itlsim: note: --output %s is spelled --format %s now (as in run and gate)\n", m.output, m.output)
		form, formFlag = m.output, "output"
	}
	if fl.Changed("format") {
		if _, err := stdoutFormat("format", m.format); err != nil {
			if _, ierr := ingest.ParseFormat(m.format); ierr == nil {
				if fl.Changed("input-format") {
					return "", "", fmt.Errorf("--format %s names an input format, and --input-format %s another: give --input-format alone", m.format, m.inputFormat)
				}
				fmt.Fprintf(stderr, "itlsim: note: --format %s names the input format, which is --input-format %s now; --format names stdout's form (table, markdown, json), as in run and gate\n",
					m.format, m.format)
				input = m.format
				if !fl.Changed("output") {
					form = "table"
				}
			}
		}
	}
	in, err := ingest.ParseFormat(input)
	if err != nil {
		return "", "", fmt.Errorf("--input-format: %w", err)
	}
	out, err := stdoutFormat(formFlag, form)
	if err != nil {
		return "", "", fmt.Errorf("%w (the files' format is --input-format: auto, %s)", err, strings.Join(ingest.Formats(), ", "))
	}
	return in, out, nil
}

// runOutputs is where a command writes its runs: the --json document, the
// --streams and --summary-csv CSVs and the --html report (nil: not written), committed all
// together with any other file of files (run's --timelines), then stdout in
// the chosen form, with any measured file's notes under a table. run,
// analyze and replay share it.
type runOutputs struct {
	files                     *outputs
	json, streams, summaryCSV *outFile
	html                      *htmlOutput
	format                    reports.Format
}

// summaryCSVUsage is the help of --summary-csv, which run, analyze and
// replay share.
const summaryCSVUsage = "write one CSV row per run (the summary's figures, columns named as in the JSON) to this file"

func (o runOutputs) write(w io.Writer, runs []reports.Run) error {
	doc := reports.Document{SchemaVersion: reports.SchemaVersion, Scenario: runs[0].Config, Runs: runs}
	if o.json != nil {
		if err := o.json.Write(func(f *os.File) error { return writeJSON(f, doc) }); err != nil {
			return err
		}
	}
	if o.streams != nil {
		if err := o.streams.Write(func(f *os.File) error { return reports.WriteStreamsCSV(f, runs) }); err != nil {
			return err
		}
	}
	if o.summaryCSV != nil {
		if err := o.summaryCSV.Write(func(f *os.File) error { return reports.WriteSummaryCSV(f, runs) }); err != nil {
			return err
		}
	}
	if o.html != nil {
		if err := o.html.write(runs); err != nil {
			return err
		}
	}
	if err := o.files.Commit(); err != nil {
		return err
	}
	if o.format == reports.FormatJSON {
		return writeJSON(w, doc)
	}
	if err := reports.WriteSummaryTable(w, runs, o.format); err != nil {
		return err
	}
	return reports.WriteNotes(w, runs, o.format)
}

// inputRegistry is what registers a command's inputs: an invocation's
// tempFiles or one set of outputs.
type inputRegistry interface {
	Reads(what string, paths ...string)
}

// readsConfig registers the files a run of cfg reads (its trace, lengths
// file, empirical length files, a model's config.json, a fitted cost
// profile) as inputs of files.
func readsConfig(files inputRegistry, cfg sim.Config) {
	files.Reads("", cfg.Workload.Files()...)
	for _, m := range []string{cfg.Model, cfg.SpecDecode.DraftModel} {
		if strings.HasSuffix(m, ".json") {
			files.Reads("", m)
		}
	}
	files.Reads("cost.profile", cfg.Cost.Profile)
}

// msValue is a flag holding milliseconds that also takes a duration with a
// unit, as people write times: "250" and "250ms" are 250, "2s" is 2000.
type msValue struct{ ms *float64 }

func newMS(p *float64) *msValue { return &msValue{p} }

func (v *msValue) String() string {
	if v.ms == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.ms, 'g', -1, 64)
}

// Set takes any number, negative too, so that the field's own check names
// a value out of range.
func (v *msValue) Set(s string) error {
	t := strings.TrimSpace(s)
	x, err := strconv.ParseFloat(t, 64)
	if err != nil {
		d, derr := time.ParseDuration(t)
		if derr != nil {
			return fmt.Errorf("expected milliseconds or a duration such as 250ms or 2s, got %q", s)
		}
		x = float64(d) / 1e6
	}
	*v.ms = x
	return nil
}

// Type names the flag's kind in --help and in flagError.
func (v *msValue) Type() string { return "ms" }
