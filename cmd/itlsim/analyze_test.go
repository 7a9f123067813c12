package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// streamsData is the folder of measured streams in the shared data.
var streamsData = filepath.Join("..", "..", "..", "shared", "data", "streams")

// analyzeDoc runs itlsim analyze with --output json and decodes the document.
func analyzeDoc(t *testing.T, args ...string) reports.Document {
	t.Helper()
	r := mustRunCLI(t, append([]string{"analyze", "--output", "json"}, args...)...)
	var doc reports.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("analyze --output json: %v\n%s", err, r.stdout)
	}
	return doc
}

func relClose(got, want, tol float64) bool {
	return got == want || math.Abs(got-want) <= tol*math.Max(math.Abs(got), math.Abs(want))
}

// TestAnalyzeVLLMFiles: the JSON itlsim analyze prints for each real vLLM
// result carries the pooled ITL and TTFT figures vLLM wrote into the file,
// to 1e-9 relative (through JSON and back).
func TestAnalyzeVLLMFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(streamsData, "vllm_bench_llama33_70b_tp8_a100", "*.json"))
	if len(files) == 0 {
		t.Skipf("no vLLM results in %s", streamsData)
	}
	doc := analyzeDoc(t, files...)
	if len(doc.Runs) != len(files) {
		t.Fatalf("%d runs for %d files", len(doc.Runs), len(files))
	}
	for i, path := range files {
		raw, _ := os.ReadFile(path)
		var want map[string]any
		_ = json.Unmarshal(raw, &want)
		run := doc.Runs[i]
		s := run.Summary
		for _, c := range []struct {
			key string
			got float64
		}{
			{"mean_itl_ms", s.ITLPooled.Mean}, {"median_itl_ms", s.ITLPooled.P50}, {"p99_itl_ms", s.ITLPooled.P99},
			{"mean_ttft_ms", s.TTFT.Mean}, {"median_ttft_ms", s.TTFT.P50}, {"p99_ttft_ms", s.TTFT.P99},
		} {
			if w := want[c.key].(float64); !relClose(c.got, w, 1e-9) {
				t.Errorf("%s: %s %.17g, vLLM wrote %.17g", run.Name, c.key, c.got, w)
			}
		}
		if run.Source == nil || run.Source.Format != "vllm" || run.Source.File != path || len(run.Streams) != 200 {
			t.Errorf("%s: source %+v, %d stream rows", run.Name, run.Source, len(run.Streams))
		}
	}
}

// TestAnalyzeReproducesSimulation: analyzing the stream file a simulation
// wrote with --timelines gives that simulation's own figures — every
// per-stream figure exactly, row by row, and pooled ITL (exact here, a
// 0.1 % histogram in the simulation) within 0.1 %.
func TestAnalyzeReproducesSimulation(t *testing.T) {
	dir := t.TempDir()
	tl, js := filepath.Join(dir, "sim.jsonl"), filepath.Join(dir, "sim.json")
	mustRunCLI(t, "run", "--requests", "300", "--timelines", tl, "--json", js)
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var simDoc reports.Document
	if err := json.Unmarshal(raw, &simDoc); err != nil {
		t.Fatal(err)
	}
	want := simDoc.Runs[0]
	got := analyzeDoc(t, tl).Runs[0]
	ws, gs := want.Summary, got.Summary
	if ws.Rejected != 0 {
		t.Fatalf("the simulation rejected %d requests; a stream file holds finished streams only", ws.Rejected)
	}
	exact := []struct {
		what      string
		got, want any
	}{
		{"requests", gs.Requests, ws.Requests}, {"finished", gs.Finished, ws.Finished},
		{"input tokens", gs.InputTokens, ws.InputTokens}, {"output tokens", gs.OutputTokens, ws.OutputTokens},
		{"duration", gs.DurationS, ws.DurationS},
		{"TTFT", gs.TTFT, ws.TTFT}, {"TPOT", gs.TPOT, ws.TPOT}, {"E2EL", gs.E2EL, ws.E2EL},
		{"stream p50 ITL", gs.StreamP50ITL, ws.StreamP50ITL}, {"stream p99 ITL", gs.StreamP99ITL, ws.StreamP99ITL},
		{"stream max gap", gs.StreamMaxGap, ws.StreamMaxGap}, {"jitter", gs.StreamJitter, ws.StreamJitter},
		{"streams with gaps", gs.StreamsWithGaps, ws.StreamsWithGaps}, {"single-chunk streams", gs.SingleChunkStreams, ws.SingleChunkStreams},
		{"unstable share", gs.UnstableStreamShare, ws.UnstableStreamShare}, {"ITL goodput", gs.ITLGoodput, ws.ITLGoodput},
		{"SLO goodput", gs.SLOGoodput, ws.SLOGoodput}, {"stalls", gs.Stalls, ws.Stalls},
		{"stalled share", gs.StalledStreamShare, ws.StalledStreamShare},
		{"pooled ITL max", gs.ITLPooled.Max, ws.ITLPooled.Max},
	}
	for _, c := range exact {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: analyze %v, simulation %v", c.what, c.got, c.want)
		}
	}
	if !relClose(gs.ITLPooled.Mean, ws.ITLPooled.Mean, 1e-12) {
		t.Errorf("pooled ITL mean: analyze %.17g, simulation %.17g", gs.ITLPooled.Mean, ws.ITLPooled.Mean)
	}
	for _, q := range []struct {
		what      string
		got, want float64
	}{{"p50", gs.ITLPooled.P50, ws.ITLPooled.P50}, {"p90", gs.ITLPooled.P90, ws.ITLPooled.P90}, {"p99", gs.ITLPooled.P99, ws.ITLPooled.P99}} {
		if !relClose(q.got, q.want, 1e-3) {
			t.Errorf("pooled ITL %s: analyze (exact) %.6g, simulation (histogram) %.6g: beyond 0.1 %%", q.what, q.got, q.want)
		}
	}
	if len(got.Streams) != len(want.Streams) {
		t.Fatalf("%d stream rows, simulation %d", len(got.Streams), len(want.Streams))
	}
	for i := range want.Streams {
		g, w := got.Streams[i], want.Streams[i]
		// A client sees neither causes nor preemptions.
		g.StallCauses, w.StallCauses, w.Preemptions = nil, nil, 0
		if gj, wj := mustJSON(t, g), mustJSON(t, w); gj != wj {
			t.Errorf("stream row %d:\nanalyze    %s\nsimulation %s", i, gj, wj)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnalyzeGolden prints the table for the small files of
// testdata/analyze, one per format: a vLLM result with a failed request,
// an AIPerf export with a cancelled one, and a GuideLLM file whose per-gap
// rows are n/a, with the notes saying why.
func TestAnalyzeGolden(t *testing.T) {
	files := []string{"testdata/analyze/vllm_small.json", "testdata/analyze/aiperf_small.jsonl", "testdata/analyze/guidellm_v03.json"}
	for _, f := range []string{"table", "markdown"} {
		t.Run(f, func(t *testing.T) {
			r := mustRunCLI(t, append([]string{"analyze", "--output", f}, files...)...)
			golden := "testdata/analyze/small." + f + ".txt"
			got := "# itlsim analyze --output " + f + " " + strings.Join(files, " ") +
				"\n# Rewrite with: go test ./cmd/itlsim -run TestAnalyzeGolden -update\n" + r.stdout
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", golden, got)
			}
			for _, w := range []string{"n/a", "(1 failed)", "per-gap metrics", "cannot be computed", "ttft + Σ itls"} {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q", w)
				}
			}
		})
	}
}

func TestAnalyzeOutputs(t *testing.T) {
	dir := t.TempDir()
	js, csv, html := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.csv"), filepath.Join(dir, "a.html")
	r := mustRunCLI(t, "analyze", "--format", "aiperf", "--json", js, "--streams", csv, "--html", html, "--itl-goodput", "100",
		"testdata/analyze/aiperf_small.jsonl")
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "aiperf_small") {
		t.Errorf("--html: %v, %d bytes", err, len(page))
	}
	if !strings.Contains(r.stdout, "ITL goodput (max gap ≤ 100 ms)") {
		t.Errorf("--itl-goodput not applied:\n%s", r.stdout)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	run := doc["runs"].([]any)[0].(map[string]any)
	s := run["summary"].(map[string]any)
	for _, k := range []string{"requests", "finished", "rejected", "ttft_ms", "itl_pooled_ms", "stream_p99_itl_ms", "itl_goodput", "failed_by_reason"} {
		if _, ok := s[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	// Failed requests are arrivals, never streams.
	if s["requests"] != 3.0 || s["finished"] != 2.0 || s["failed"] != 1.0 || s["measured"] != true || run["source"].(map[string]any)["format"] != "aiperf" {
		t.Errorf("summary failed %v measured %v, source %v", s["failed"], s["measured"], run["source"])
	}
	rows, err := os.ReadFile(csv)
	if err != nil || strings.Count(string(rows), "\n") != 3 {
		t.Errorf("streams CSV: %v\n%s", err, rows)
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, []byte("{\"ttfts\": [0.1],\n \"itls\": [[0.02, "), 0o644)
	neg := filepath.Join(dir, "neg.jsonl")
	os.WriteFile(neg, []byte(`{"id":3,"arrival_s":0,"chunk_times_s":[0.1,0.3,0.2]}`+"\n"), 0o644)
	simDoc := filepath.Join(dir, "doc.json")
	os.WriteFile(simDoc, []byte(`{"scenario": {}, "runs": []}`), 0o644)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"analyze"}, []string{"requires at least 1 arg"}},
		{[]string{"analyze", filepath.Join(dir, "missing.json")}, []string{"missing.json", "no such file"}},
		{[]string{"analyze", trunc}, []string{"trunc.json", "line 2", "truncated"}},
		{[]string{"analyze", neg}, []string{"neg.jsonl", "line 1", "negative gap"}},
		{[]string{"analyze", simDoc}, []string{"doc.json", "itlsim results document", "itlsim gate"}},
		{[]string{"analyze", "--input-format", "json", trunc}, []string{"--input-format", "unknown input format"}},
		{[]string{"analyze", "--format", "csv", trunc}, []string{"--format", "table, markdown or json", "--input-format: auto, aiperf, guidellm, itlsim, vllm"}},
		{[]string{"analyze", "--output", "html", trunc}, []string{"--output", "table, markdown or json"}},
		{[]string{"analyze", "--itl-goodput", "-1", "testdata/analyze/vllm_small.json"}, []string{"itl_goodput_ms"}},
	}
	for _, c := range cases {
		r := execCLI(t, c.args...)
		if r.code == 0 {
			t.Errorf("itlsim %s: exit 0, want an error", strings.Join(c.args, " "))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("itlsim %s: stderr %q lacks %q", strings.Join(c.args, " "), r.stderr, w)
			}
		}
	}
}

// TestAnalyzeHTMLDescribesTheSource: the page of a measured run says where
// the streams come from (file, format, the model the file names, what it
// lacks) instead of an empty simulated scenario, and leaves out the charts
// the file has no data for, saying so.
func TestAnalyzeHTMLDescribesTheSource(t *testing.T) {
	page := filepath.Join(t.TempDir(), "m.html")
	mustRunCLI(t, "analyze", "testdata/analyze/vllm_small.json", "--html", page)
	raw := string(mustRead(t, page))
	for _, want := range []string{"Measured streams read from testdata/analyze/vllm_small.json (vllm format)", "no request start times",
		"Not shown, for want of data", "Stall time by cause: measured streams do not say why"} {
		if !strings.Contains(raw, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"tensor parallel 0", "preemption by ,", `<section id="kv">`, `<section id="itl-time">`, `<section id="stalls">`} {
		if strings.Contains(raw, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}
