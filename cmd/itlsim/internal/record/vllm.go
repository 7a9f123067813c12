package record

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/workloads"
)

// VLLMHeader is the header of a recording's vLLM bench result file
// (ingest.VLLMResult): the backend by endpoint, the model, the schedule's
// rate, burstiness and in-flight cap, dated now.
func VLLMHeader(w *workloads.Config, o Options, now time.Time) ingest.VLLMResult {
	h := ingest.VLLMResult{Date: now.Format("20060102-150405"), Backend: "vllm", ModelID: o.Model,
		NumPrompts: w.Requests, RequestRate: w.Rate, MaxConcurrency: o.Concurrency}
	if o.Endpoint == EndpointChat {
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
	return h
}

// VLLMFileName is vLLM bench's default result file name for h:
// BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json, the model's last path
// element, the rate as Python prints a float ("4.0", "inf").
func VLLMFileName(h ingest.VLLMResult) string {
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
	return fmt.Sprintf("%s-%sqps%s-%s-%s.json", h.Backend, rate, conc, model, h.Date)
}

// VLLMResult fills head with the recording: one entry per request sent
// (a failed or refused one with its error and no output, as vLLM writes
// it) and the summary figures under vLLM's keys.
func (res *Result) VLLMResult(head ingest.VLLMResult, summary map[string]float64) ingest.VLLMResult {
	r := head
	r.NumPrompts = res.Sent
	r.Summary = summary
	r.Requests = make([]ingest.VLLMRequest, len(res.Streams))
	for i := range res.Streams {
		st := &res.Streams[i]
		q := &r.Requests[i]
		q.InputLen, q.StartTime = st.InputTokens, float64(st.Arrival)/1e9
		switch {
		case st.Outcome == OutcomeRejected:
			q.Err = "rejected: " + st.Rejected
		case st.Outcome != OutcomeOK:
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
	return r
}
