package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/cmd/itlsim/internal/record"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/workloads"
)

// saveResult is record's vLLM bench result file (--save-result,
// --result-dir, --result-filename, as vllm bench serve names them): the
// recording in the JSON vLLM's benchmark writes (record.Result.VLLMResult).
type saveResult struct {
	save, detailed bool
	dir, filename  string
}

func (s *saveResult) bind(f *pflag.FlagSet) {
	f.BoolVar(&s.save, "save-result", false, "vLLM bench: also write the recording as vLLM's benchmark result JSON (per-request lists always included)")
	f.BoolVar(&s.detailed, "save-detailed", false, "vLLM bench: accepted; itlsim's result file always has the per-request lists")
	f.StringVar(&s.dir, "result-dir", "", "vLLM bench: folder of the --save-result file (default: the current folder)")
	f.StringVar(&s.filename, "result-filename", "", "vLLM bench: name of the --save-result file (default: vLLM's BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json)")
}

func (s *saveResult) on() bool { return s.save }

// check refuses the file's options without --save-result: a file the user
// named and never got would be a silent surprise.
func (s *saveResult) check(cmd *cobra.Command) error {
	for _, name := range []string{"result-dir", "result-filename", "save-detailed"} {
		if !s.save && cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s: needs --save-result", name)
		}
	}
	return nil
}

// savedResult is the planned result file and its header.
type savedResult struct {
	file *outFile
	head ingest.VLLMResult
}

// add plans the result file among files (checked against the inputs with
// the others).
func (s *saveResult) add(files *outputs, w *workloads.Config, opt record.Options, now time.Time) *savedResult {
	if !s.save {
		return nil
	}
	h := record.VLLMHeader(w, opt, now)
	name := s.filename
	if name == "" {
		name = record.VLLMFileName(h)
	}
	return &savedResult{file: files.Add("--save-result", filepath.Join(s.dir, name)), head: h}
}

// write fills the file from the recording and its summary (the run's vLLM
// block: the figures analyze prints).
func (s *savedResult) write(res *record.Result, summary reports.VLLM) error {
	r := res.VLLMResult(s.head, summary)
	return s.file.Write(func(f *os.File) error { return ingest.WriteVLLMResult(f, r) })
}
