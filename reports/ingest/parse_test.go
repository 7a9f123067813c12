package ingest_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

func parseFile(t *testing.T, path string) []ingest.Recording {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ingest.Parse(path, data, "")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func summarize(rec *ingest.Recording) reports.Summary {
	m := sim.DefaultConfig().Metrics
	return reports.Summarize(rec.Result(m), m)
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// The small files in testdata describe the same two streams in each format
// (one with gaps of 20, 30 and 500 ms after a 100 ms TTFT, one of a single
// chunk) and a failed request, so the expected figures are worked out by hand.
func TestSmallFiles(t *testing.T) {
	type want struct {
		format                      ingest.Format
		runs                        int
		requests, finished, failed  int
		ttftP50, tpotMax, e2elMax   float64
		pooledMean, pooledMax, good float64
		gapsUnavailable             bool
	}
	cases := map[string]want{
		// ttfts 100, 200, 50 ms; gaps {20,30,500}, {}, {10,10}; one error.
		"testdata/vllm_small.json": {format: ingest.FormatVLLM, runs: 1, requests: 4, finished: 3, failed: 1,
			ttftP50: 100, tpotMax: 550.0 / 3, e2elMax: 650, pooledMean: 114, pooledMax: 500, good: 2.0 / 3},
		// the same first and third streams, the second cancelled.
		"testdata/aiperf_small.jsonl": {format: ingest.FormatAIPerf, runs: 1, requests: 3, finished: 2, failed: 1,
			ttftP50: 75, tpotMax: 550.0 / 3, e2elMax: 650, pooledMean: 114, pooledMax: 500, good: 0.5},
		// first and last token only: no gaps.
		"testdata/guidellm_v03.json": {format: ingest.FormatGuideLLM, runs: 1, requests: 3, finished: 2, failed: 1,
			ttftP50: 150, tpotMax: 550.0 / 3, e2elMax: 650, gapsUnavailable: true},
		"testdata/guidellm_v04.json": {format: ingest.FormatGuideLLM, runs: 2, requests: 2, finished: 1, failed: 1,
			ttftP50: 250, tpotMax: 100, e2elMax: 1250, gapsUnavailable: true},
		"testdata/streams_small.jsonl": {format: ingest.FormatStreams, runs: 2, requests: 3, finished: 2, failed: 1,
			ttftP50: 150, tpotMax: 550.0 / 3, e2elMax: 650, pooledMean: 550.0 / 3, pooledMax: 500, good: 0.5},
	}
	for path, w := range cases {
		t.Run(path, func(t *testing.T) {
			recs := parseFile(t, path)
			if len(recs) != w.runs {
				t.Fatalf("%d runs, want %d", len(recs), w.runs)
			}
			rec := &recs[0]
			if rec.Format != w.format {
				t.Errorf("format %q, want %q", rec.Format, w.format)
			}
			s := summarize(rec)
			if s.Requests != w.requests || s.Finished != w.finished || s.Failed != w.failed {
				t.Errorf("requests/finished/failed %d/%d/%d, want %d/%d/%d", s.Requests, s.Finished, s.Failed, w.requests, w.finished, w.failed)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"TTFT p50", s.TTFT.P50, w.ttftP50}, {"TPOT max", s.TPOT.Max, w.tpotMax}, {"E2EL max", s.E2EL.Max, w.e2elMax},
				{"pooled ITL mean", s.ITLPooled.Mean, w.pooledMean}, {"pooled ITL max", s.ITLPooled.Max, w.pooledMax},
				{"ITL goodput", s.ITLGoodput, w.good},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s: got %.12g, want %.12g", c.what, c.got, c.want)
				}
			}
			if s.GapsUnavailable != w.gapsUnavailable {
				t.Errorf("gaps unavailable %v, want %v", s.GapsUnavailable, w.gapsUnavailable)
			}
			if w.gapsUnavailable && (s.StreamsWithGaps != 0 || s.SingleChunkStreams != 0 || s.Stalls != 0) {
				t.Errorf("a file without gaps reports %d streams with gaps, %d single-chunk streams, %d stalls",
					s.StreamsWithGaps, s.SingleChunkStreams, s.Stalls)
			}
			if !w.gapsUnavailable && (s.Stalls != 1 || s.StalledStreamShare != 0.5 && s.StalledStreamShare != 1.0/3) {
				t.Errorf("stalls %d on %.3f of streams, want the one 500 ms gap", s.Stalls, s.StalledStreamShare)
			}
		})
	}
}

func TestSmallFileDetails(t *testing.T) {
	v := parseFile(t, "testdata/vllm_small.json")[0]
	if !v.NoArrivals || v.Duration != 2e9 || v.Failed["aiohttp.ClientConnectorError: Cannot connect"] != 1 {
		t.Errorf("vllm: no arrivals %v, duration %g, failed %v", v.NoArrivals, v.Duration, v.Failed)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "ttft + Σ itls") {
		t.Errorf("vllm notes %q do not say how E2EL was reconstructed", v.Notes)
	}
	a := parseFile(t, "testdata/aiperf_small.jsonl")[0]
	if a.Streams[1].Arrival != 1e9 || a.Streams[1].OutputTokens != 3 || !near(a.Duration, 1.07e9) {
		t.Errorf("aiperf: second stream arrival %g, tokens %d, duration %g", a.Streams[1].Arrival, a.Streams[1].OutputTokens, a.Duration)
	}
	g := parseFile(t, "testdata/guidellm_v04.json")
	if g[0].Name != "guidellm_v04#1" || g[1].Name != "guidellm_v04#2" || g[0].Streams[0].Chunks != 5 || g[0].Failed["incomplete"] != 1 {
		t.Errorf("guidellm runs %q %q, chunks %d, failed %v", g[0].Name, g[1].Name, g[0].Streams[0].Chunks, g[0].Failed)
	}
	if !strings.Contains(strings.Join(g[0].Notes, "\n"), "per-gap metrics") {
		t.Errorf("guidellm notes %q do not say that per-gap metrics cannot be computed", g[0].Notes)
	}
	s := parseFile(t, "testdata/streams_small.jsonl")
	if s[0].Name != "streams_small:a" || s[1].Name != "streams_small:b" || s[1].Streams[0].OutputTokens != 5 {
		t.Errorf("stream runs %q %q, tokens %d", s[0].Name, s[1].Name, s[1].Streams[0].OutputTokens)
	}
	res := s[0].Result(sim.DefaultConfig().Metrics)
	if len(res.Worst) != 2 || res.Worst[0].ID != 0 || len(res.Worst[0].Stalls) != 1 || res.Worst[0].Stalls[0].Index != 3 {
		t.Errorf("worst streams %+v", res.Worst)
	}
	if len(res.Series.Buckets) == 0 || res.Series.Buckets[0].ITL.N != 3 {
		t.Errorf("time series %+v", res.Series)
	}
}

// TestBadInput: every kind of bad file is an error naming the file, where
// in it, and what was expected.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name, data string
		format     ingest.Format
		want       []string
	}{
		{"empty", "", "", []string{"bad.json: empty file"}},
		{"blank", " \n\n", ingest.FormatAIPerf, []string{"empty file"}},
		{"not json", "ttft,itl\n1,2\n", "", []string{"not JSON", `"ttft,itl`}},
		{"truncated", `{"ttfts": [0.1, 0.2], "itls": [[0.01], [`, "", []string{"line 1", "truncated"}},
		{"truncated forced", `{"ttfts": [0.1, 0.2], "itls": [[0.01], [`, ingest.FormatVLLM, []string{"line 1", "truncated"}},
		{"wrong type", `{"ttfts": ["fast"], "itls": [[]], "output_lens": [1]}`, "", []string{"ttfts", "expected a number", "string"}},
		{"wrong nesting", `{"ttfts": [0.1], "itls": [0.02], "output_lens": [1]}`, "", []string{"itls", "expected a list"}},
		{"mismatched lists", `{"ttfts": [0.1, 0.2], "itls": [[0.01]], "output_lens": [2, 1]}`, "", []string{`"itls" has 1 entries but "ttfts" has 2`}},
		{"no output_lens", `{"ttfts": [0.1], "itls": [[0.01]]}`, "", []string{"output_lens"}},
		{"negative gap", `{"ttfts": [0.1, 0.1], "itls": [[0.01], [0.02, -0.005]], "output_lens": [2, 3]}`, "", []string{"request 1", "gap 1", "negative gap -5 ms"}},
		{"negative ttft", `{"ttfts": [-0.1], "itls": [[0.01]], "output_lens": [2]}`, "", []string{"request 0", "negative time"}},
		{"null gap", `{"ttfts": [0.1], "itls": [[0.01, null]], "output_lens": [3]}`, "", []string{"itls[0][1] is null"}},
		{"huge time", `{"ttfts": [1e300], "itls": [[]], "output_lens": [1]}`, "", []string{"request 0", "finite"}},
		{"trailing data", `{"ttfts": [0.1], "itls": [[]], "output_lens": [1]} {"x": 1}`, ingest.FormatVLLM, []string{"unexpected data after"}},
		{"unknown keys", `{"hello": 1}`, "", []string{"unknown format", "hello", "--format"}},
		{"document", `{"scenario": {}, "runs": []}`, "", []string{"itlsim results document"}},
		{"aiperf bad unit", `{"metadata":{"timestamp_ns":1},"metrics":{"ttft":{"value":1,"unit":"fortnights"}},"error":null}`, "", []string{"line 1", "metrics.ttft", "fortnights"}},
		{"aiperf no ttft", "{\"metadata\":{\"timestamp_ns\":1},\"metrics\":{\"ttft\":{\"value\":1,\"unit\":\"ms\"}},\"error\":null}\n{\"metadata\":{\"timestamp_ns\":2},\"metrics\":{\"inter_chunk_latency\":{\"value\":[1],\"unit\":\"ms\"}},\"error\":null}", "", []string{"line 2", "metrics.ttft: missing"}},
		{"aiperf list type", `{"metadata":{"timestamp_ns":1},"metrics":{"ttft":{"value":1,"unit":"ms"},"inter_chunk_latency":{"value":"1,2","unit":"ms"}},"error":null}`, "", []string{"inter_chunk_latency.value", "expected a list of numbers"}},
		{"aiperf broken line", "{\"metadata\":{\"timestamp_ns\":1},\"metrics\":{\"ttft\":{\"value\":1,\"unit\":\"ms\"}},\"error\":null}\n{\"metadata\":", "", []string{"line 2", "truncated"}},
		{"aiperf no timestamp", `{"metadata":{},"metrics":{"ttft":{"value":1,"unit":"ms"}},"error":null}`, "", []string{"line 1", "timestamp_ns"}},
		{"streams backwards", `{"id":1,"arrival_s":0,"chunk_times_s":[0.2,0.1]}`, "", []string{"line 1", "negative gap"}},
		{"streams before arrival", `{"id":1,"arrival_s":1,"chunk_times_s":[0.5]}`, "", []string{"line 1", "before arrival"}},
		{"streams duplicate", "{\"id\":1,\"arrival_s\":0,\"chunk_times_s\":[0.1]}\n{\"id\":1,\"arrival_s\":0,\"chunk_times_s\":[0.1]}", "", []string{"line 2", "id 1 repeats line 1"}},
		{"streams tokens", `{"id":1,"arrival_s":0,"chunk_times_s":[0.1],"chunk_tokens":[1,2]}`, "", []string{"2 chunk_tokens for 1 chunk_times_s"}},
		{"streams no chunks", `{"id":1,"arrival_s":0,"chunk_times_s":[]}`, ingest.FormatStreams, []string{"line 1", "at least one time"}},
		{"guidellm empty", `{"benchmarks": []}`, "", []string{"non-empty \"benchmarks\""}},
		{"guidellm no times", `{"benchmarks": [{"requests": {"successful": [{"output_tokens": 3}]}}]}`, "", []string{"benchmarks[0].requests.successful[0]", "first_token_time"}},
		{"guidellm backwards", `{"benchmarks": [{"requests": {"successful": [{"output_tokens": 3, "start_time": 5, "first_token_time": 6, "last_token_time": 5.5}]}}]}`, "", []string{"successful[0]", "before the first"}},
		{"forced wrong format", `{"ttfts": [0.1], "itls": [[]], "output_lens": [1]}`, ingest.FormatGuideLLM, []string{"not a GuideLLM benchmark file"}},
		{"vllm no requests", `{"duration": 2.0, "completed": 0, "ttfts": [], "itls": [], "output_lens": [], "errors": []}`, "", []string{"no requests"}},
		{"guidellm no requests", `{"benchmarks": [{"requests": {"successful": []}}]}`, "", []string{"no requests"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ingest.Parse("bad.json", []byte(c.data), c.format)
			if err == nil {
				t.Fatalf("no error for %q", c.data)
			}
			if !strings.HasPrefix(err.Error(), "bad.json: ") {
				t.Errorf("error %q does not start with the file's name", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := ingest.Parse("doc.json", []byte(`{"scenario": {}, "runs": []}`), ""); !errors.Is(err, ingest.ErrDocument) {
		t.Errorf("a results document gave %v, want ErrDocument", err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"", "auto"} {
		if f, err := ingest.ParseFormat(s); f != "" || err != nil {
			t.Errorf("ParseFormat(%q) = %q, %v; want detection", s, f, err)
		}
	}
	for _, s := range ingest.Formats() {
		if f, err := ingest.ParseFormat(s); string(f) != s || err != nil {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ingest.ParseFormat("json"); err == nil || !strings.Contains(err.Error(), "aiperf, guidellm, itlsim, vllm") {
		t.Errorf("ParseFormat(json) error %v does not list the formats", err)
	}
}

// TestJSONError: a mistyped field of an itlsim results document is named by
// its JSON path and position, in plain words, never by Go types.
func TestJSONError(t *testing.T) {
	data := []byte("{\"scenario\": {},\n \"runs\": [{\"name\": \"x\", \"streams\": {\"a\": 1}}]}")
	var doc reports.Document
	err := ingest.JSONError(data, json.Unmarshal(data, &doc))
	want := "line 2, column 37: runs.streams: expected a list, got JSON object"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	data = []byte(`{"runs": [{"summary": {"requests": "many"}}]}`)
	err = ingest.JSONError(data, json.Unmarshal(data, &doc))
	if err == nil || !strings.Contains(err.Error(), "runs.summary.requests: expected an integer, got JSON string") || strings.Contains(err.Error(), "Go ") {
		t.Errorf("got %v", err)
	}
}
