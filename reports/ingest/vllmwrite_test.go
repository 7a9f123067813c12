package ingest_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports/ingest"
)

// A result written in vLLM's form reads back through the vLLM reader with
// every request's lengths, first-token time, gaps, latency and arrival,
// failed requests counted as failed.
func TestVLLMResultRoundTrip(t *testing.T) {
	r := ingest.VLLMResult{
		Date: "20261203-061500", Backend: "vllm", ModelID: "org/model", NumPrompts: 3,
		RequestRate: 4, MaxConcurrency: 2,
		Summary: map[string]float64{"duration": 2.5, "completed": 2, "total_input_tokens": 30,
			"total_output_tokens": 7, "request_throughput": 0.8, "mean_ttft_ms": 40, "p99_ttft_ms": 55,
			"p50_ttft_ms": 41, "median_ttft_ms": 41, "p99.9_itl_ms": 9},
		Requests: []ingest.VLLMRequest{
			{InputLen: 10, OutputLen: 4, TTFT: 0.04, ITLs: []float64{0.01, 0.02, 0.015}, Latency: 0.085, StartTime: 0},
			{InputLen: 10, Err: "http 500"},
			{InputLen: 10, OutputLen: 3, TTFT: 0.05, ITLs: []float64{0.01, 0.01}, Latency: 0.07, StartTime: 1.25},
		},
	}
	var buf bytes.Buffer
	if err := ingest.WriteVLLMResult(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	for k, want := range map[string]any{"backend": "vllm", "model_id": "org/model", "tokenizer_id": "org/model",
		"num_prompts": 3.0, "request_rate": 4.0, "max_concurrency": 2.0, "completed": 2.0, "burstiness": 1.0} {
		if doc[k] != want {
			t.Errorf("%s = %v, want %v", k, doc[k], want)
		}
	}
	if _, ok := doc["request_goodput"]; !ok {
		t.Error("request_goodput missing (vLLM writes null without goodput terms)")
	}
	s := buf.String()
	if !strings.Contains(s, `"completed": 2,`) || !strings.Contains(s, `"request_rate": 4.0,`) {
		t.Errorf("counts must be integers and rates Python floats:\n%s", s)
	}
	if i, j := strings.Index(s, `"p50_ttft_ms"`), strings.Index(s, `"p99_ttft_ms"`); i < 0 || j < i {
		t.Errorf("percentile keys must come in increasing order:\n%s", s)
	}
	recs, err := ingest.Parse("saved.json", buf.Bytes(), ingest.FormatVLLM)
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	if len(rec.Streams) != 2 {
		t.Fatalf("read back %d streams, want the 2 that completed", len(rec.Streams))
	}
	b := rec.Streams[1]
	if b.InputTokens != 10 || b.OutputTokens != 3 || math.Abs(b.TTFT-0.05e9) > 1 || len(b.Gaps) != 2 ||
		math.Abs(b.E2EL-0.07e9) > 1 || math.Abs(b.Arrival-1.25e9) > 1 {
		t.Errorf("second stream read back as %+v", b)
	}
	if rec.Model != "org/model" || math.Abs(rec.Duration-2.5e9) > 1 || rec.Load.Concurrency != 2 {
		t.Errorf("header read back as model %q, duration %v, concurrency %d", rec.Model, rec.Duration, rec.Load.Concurrency)
	}
}

// vLLM writes an uncapped all-at-once schedule as "inf"; JSON has no NaN.
func TestVLLMResultInfAndNaN(t *testing.T) {
	var buf bytes.Buffer
	if err := ingest.WriteVLLMResult(&buf, ingest.VLLMResult{RequestRate: math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"request_rate": "inf"`) || !strings.Contains(buf.String(), `"max_concurrency": null`) {
		t.Errorf("got %s", buf.String())
	}
	buf.Reset()
	err := ingest.WriteVLLMResult(&buf, ingest.VLLMResult{Summary: map[string]float64{"mean_ttft_ms": math.NaN()}})
	if err == nil || !strings.Contains(err.Error(), "mean_ttft_ms") {
		t.Errorf("a NaN figure: err = %v, want one naming mean_ttft_ms", err)
	}
}
