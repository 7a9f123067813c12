package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// recording in the JSON vLLM's benchmark writes, so tools that read those
// files read itlsim's recordings too.
type saveResult struct {
	save     bool
	detailed bool
	dir      string
	filename string
}

func (s *saveResult) bind(f *pflag.FlagSet) {
	f.BoolVar(&s.save, "save-result", false, "vLLM bench: also write the recording as vLLM's benchmark result JSON (per-request lists always included)")
	f.BoolVar(&s.detailed, "save-detailed", false, "vLLM bench: accepted; itlsim's result file always has the per-request lists")
	f.StringVar(&s.dir, "result-dir", "", "vLLM bench: folder of the --save-result file (default: the current folder)")
	f.StringVar(&s.filename, "result-filename", "", "vLLM bench: name of the --save-result file (default: vLLM's BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json)")
}

func (s *saveResult) on() bool { return s.save }

// check refuses the file's options without --save-result, as a file the
// user named and never got would be a silent surprise.
func (s *saveResult) check(cmd *cobra.Command) error {
	if s.save {
		return nil
	}
	for _, name := range []string{"result-dir", "result-filename", "save-detailed"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s: needs --save-result", name)
		}
	}
	return nil
}

// savedResult is the planned result file and what its header says.
type savedResult struct {
	file *outFile
	head ingest.VLLMResult
}

// add plans the result file among files (checked against the inputs with
// the others), its header from the workload and the recorder's options.
func (s *saveResult) add(files *outputs, w *workloads.Config, opt record.Options, now time.Time) *savedResult {
	if !s.save {
		return nil
	}
	h := ingest.VLLMResult{Date: now.Format("20060102-150405"), Backend: "vllm", ModelID: opt.Model,
		NumPrompts: w.Requests, RequestRate: w.Rate, MaxConcurrency: opt.Concurrency}
	if opt.Endpoint == record.EndpointChat {
		h.Backend = "openai-chat"
	}
	switch w.Arrival {
	case workloads.ArrivalClosed:
		h.RequestRate, h.MaxConcurrency = math.Inf(1), w.Users
	case workloads.ArrivalGamma:
		switch {
		case w.Shape > 0:
			h.Burstiness = w.Shape
		case w.CV > 0:
			h.Burstiness = 1 / (w.CV * w.CV)
		}
	}
	name := s.filename
	if name == "" {
		// vLLM's default: f"{backend}-{request_rate}qps{-concurrencyN}-{model}-{date}.json".
		rate := "inf"
		if !math.IsInf(h.RequestRate, 0) && h.RequestRate > 0 {
			rate = strconv.FormatFloat(h.RequestRate, 'f', -1, 64)
			if !strings.Contains(rate, ".") {
				rate += ".0"
			}
		}
		conc := ""
		if h.MaxConcurrency > 0 {
			conc = fmt.Sprintf("-concurrency%d", h.MaxConcurrency)
		}
		model := h.ModelID[strings.LastIndex(h.ModelID, "/")+1:]
		name = fmt.Sprintf("%s-%sqps%s-%s-%s.json", h.Backend, rate, conc, model, h.Date)
	}
	if s.dir != "" {
		name = filepath.Join(s.dir, name)
	}
	return &savedResult{file: files.Add("--save-result", name), head: h}
}

// write fills the result file from the recording and its summary (the
// run's vLLM block, the figures analyze prints).
func (s *savedResult) write(res *record.Result, summary reports.VLLM) error {
	r := s.head
	r.NumPrompts = res.Sent
	r.Summary = summary
	r.Requests = make([]ingest.VLLMRequest, len(res.Streams))
	for i := range res.Streams {
		st := &res.Streams[i]
		q := &r.Requests[i]
		q.InputLen, q.StartTime = st.InputTokens, float64(st.Arrival)/1e9
		switch {
		case st.Outcome == record.OutcomeRejected:
			q.Err = "rejected: " + st.Rejected
		case st.Outcome != record.OutcomeOK:
			q.Err = st.Err
			if q.Err == "" {
				q.Err = st.Outcome
			}
		case len(st.ChunkTimes) > 0:
			q.OutputLen = st.OutputTokens
			q.TTFT = float64(st.ChunkTimes[0]-st.Arrival) / 1e9
			q.ITLs = make([]float64, len(st.ChunkTimes)-1)
			for j := 1; j < len(st.ChunkTimes); j++ {
				q.ITLs[j-1] = float64(st.ChunkTimes[j]-st.ChunkTimes[j-1]) / 1e9
			}
			q.Latency = float64(st.ChunkTimes[len(st.ChunkTimes)-1]-st.Arrival) / 1e9
		default:
			q.Err = "no output"
		}
	}
	return s.file.Write(func(f *os.File) error { return ingest.WriteVLLMResult(f, r) })
}
