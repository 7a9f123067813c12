package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
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
type measuredFlags struct {
	format   string // input format: auto or an ingest.Format
	output   string // stdout form
	jsonPath string
}

func (m *measuredFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&m.format, "format", "auto", "input format: auto, "+strings.Join(ingest.Formats(), ", "))
	f.StringVar(&m.output, "output", "table", "stdout form: table, markdown or json")
	f.StringVar(&m.jsonPath, "json", "", "write the full results (runs, streams, time series) as JSON to this file")
}

// runOutputs is where a command writes its runs: the --json document, the
// --streams CSV and the --html report (nil: not written), committed all
// together with any other file of files (run's --timelines), then stdout in
// the chosen form, with any measured file's notes under a table. run,
// analyze and replay share it.
type runOutputs struct {
	files         *outputs
	json, streams *outFile
	html          *htmlOutput
	format        reports.Format
}

func (o runOutputs) write(w io.Writer, runs []reports.Run) error {
	doc := reports.Document{SchemaVersion: reports.SchemaVersion, Scenario: runs[0].Config, Runs: runs}
	if o.json != nil {
		if err := o.json.write(func(f *os.File) error { return writeJSON(f, doc) }); err != nil {
			return err
		}
	}
	if o.streams != nil {
		if err := o.streams.write(func(f *os.File) error { return reports.WriteStreamsCSV(f, runs) }); err != nil {
			return err
		}
	}
	if o.html != nil {
		if err := o.html.write(runs); err != nil {
			return err
		}
	}
	if err := o.files.commit(); err != nil {
		return err
	}
	if o.format == reports.FormatJSON {
		return writeJSON(w, doc)
	}
	if err := reports.WriteSummaryTable(w, runs, o.format); err != nil {
		return err
	}
	return writeNotes(w, runs, o.format)
}
