package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// replayDoc runs itlsim replay with --output json and decodes the document.
func replayDoc(t *testing.T, args ...string) reports.Document {
	t.Helper()
	r := mustRunCLI(t, append([]string{"replay", "--output", "json"}, args...)...)
	var doc reports.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("replay --output json: %v\n%s", err, r.stdout)
	}
	return doc
}

// TestReplayGolden prints the table for a small stream file: five streams,
// one with a 450 ms stall, one of two-token chunks, one of a single chunk;
// one 200 ms pause injected in the middle of each, without and with a
// 500 ms-deep smoothing buffer.
func TestReplayGolden(t *testing.T) {
	args := []string{"replay", "--output", "markdown", "--pauses", "1", "--pause-ms", "200", "--pause-at", "middle",
		"--smoothing", "none,33ms/500ms", "testdata/replay/small.jsonl"}
	r := mustRunCLI(t, args...)
	golden := "testdata/replay/small.markdown.txt"
	got := "<!-- itlsim " + strings.Join(args, " ") + "\n     rewrite with: go test ./cmd/itlsim -run TestReplayGolden -update -->\n" + r.stdout
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
	if h := headerCells(r.stdout); len(h) != 3 || h[1] != "smoothing=none" || h[2] != "smoothing=33ms/500ms" {
		t.Errorf("columns %v", h)
	}
}

// Without pauses or mitigations, replay gives exactly what analyze gives,
// for every importer with gaps.
func TestReplayNoneIsAnalyze(t *testing.T) {
	for _, f := range []string{"testdata/analyze/vllm_small.json", "testdata/analyze/aiperf_small.jsonl", "testdata/replay/small.jsonl"} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			a := analyzeDoc(t, f).Runs[0]
			r := replayDoc(t, f).Runs[0]
			if a.Name != r.Name {
				t.Errorf("names %q and %q", r.Name, a.Name)
			}
			if gj, wj := mustJSON(t, r.Summary), mustJSON(t, a.Summary); gj != wj {
				t.Errorf("summary:\nreplay  %s\nanalyze %s", gj, wj)
			}
			if !reflect.DeepEqual(r.Streams, a.Streams) {
				t.Error("stream rows differ")
			}
			if n := len(r.Source.Notes); n != len(a.Source.Notes)+1 || !strings.Contains(r.Source.Notes[n-1], "replayed through network none") {
				t.Errorf("notes %q", r.Source.Notes)
			}
		})
	}
}

// On a real vLLM result, a smoothing buffer of depth D hides injected pauses
// shorter than D and not longer ones: with D = 1 s, 300 ms and 900 ms pauses
// in the middle of every stream leave no client gap beyond two 33 ms
// releases, while a 2 s pause still shows as a gap of most of its excess
// over what the buffer held.
func TestReplaySmoothingHidesShortPausesRealVLLM(t *testing.T) {
	f := filepath.Join(streamsData, "vllm_bench_llama33_70b_tp8_a100", "serving_tp8_pp1_sharegpt_qps_01.json")
	if _, err := os.Stat(f); err != nil {
		t.Skipf("no vLLM result: %v", err)
	}
	for _, c := range []struct {
		pause  string
		ms     float64
		hidden bool
	}{{"300", 300, true}, {"900", 900, true}, {"2000", 2000, false}} {
		doc := replayDoc(t, f, "--pauses", "1", "--pause-at", "middle", "--pause-ms", c.pause, "--smoothing", "none,33ms/1s")
		raw, smooth := doc.Runs[0].Summary, doc.Runs[1].Summary
		if raw.StreamMaxGap.P50 < c.ms {
			t.Errorf("pause %s ms: the median stream's largest gap is %.1f ms without smoothing", c.pause, raw.StreamMaxGap.P50)
		}
		if c.hidden && smooth.StreamMaxGap.Max > 66.5 {
			t.Errorf("pause %s ms under a 1 s buffer: largest client gap %.1f ms", c.pause, smooth.StreamMaxGap.Max)
		}
		// The buffer held 1 s of tokens and drains at ≥ 3/4 of their rate.
		if !c.hidden && smooth.StreamMaxGap.P50 < c.ms-1000*4/3.0 {
			t.Errorf("pause %s ms under a 1 s buffer: the median stream's largest gap is only %.1f ms", c.pause, smooth.StreamMaxGap.P50)
		}
		if smooth.TTFT.Mean-raw.TTFT.Mean < 999 || smooth.TTFT.Mean-raw.TTFT.Mean > 1001 {
			t.Errorf("the 1 s buffer added %.1f ms to the mean TTFT", smooth.TTFT.Mean-raw.TTFT.Mean)
		}
		t.Logf("pause %s ms: largest gap p50/max %.1f/%.1f ms raw, %.1f/%.1f ms smoothed", c.pause,
			raw.StreamMaxGap.P50, raw.StreamMaxGap.Max, smooth.StreamMaxGap.P50, smooth.StreamMaxGap.Max)
	}
}

// Every real file replays through networks, flushes and smoothing buffers,
// one column per combination, the same output twice, and --json writes the
// document printed.
func TestReplayRealFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(streamsData, "*", "*.json*"))
	if len(files) == 0 {
		t.Skipf("no stream files in %s", streamsData)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "r.json")
			args := []string{"--pauses", "2", "--pause-ms", "lognormal:400,300", "--network", "none,mobile-4g",
				"--flush", "none,50ms", "--smoothing", "none,33ms", "--frame-ms", "16.7", f}
			doc := replayDoc(t, append([]string{"--json", js}, args...)...)
			if len(doc.Runs) != 8 || doc.Runs[0].Name != "none/flush=none/smoothing=none" || doc.Runs[7].Name != "mobile-4g/flush=50ms/smoothing=33ms" {
				var names []string
				for _, r := range doc.Runs {
					names = append(names, r.Name)
				}
				t.Fatalf("runs %v", names)
			}
			again := replayDoc(t, args...)
			if mustJSON(t, again) != mustJSON(t, doc) {
				t.Error("two replays with the same seed differ")
			}
			raw, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var written reports.Document
			if err := json.Unmarshal(raw, &written); err != nil || mustJSON(t, written) != mustJSON(t, doc) {
				t.Errorf("--json wrote another document: %v", err)
			}
			for _, r := range doc.Runs {
				if s := r.Summary; s.Finished+s.Rejected > s.Requests || s.Finished == 0 {
					t.Errorf("%s: %d finished of %d", r.Name, s.Finished, s.Requests)
				}
			}
		})
	}
}

func TestReplayBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pause-at", "later", "testdata/replay/small.jsonl"}, `--pause-at: must be start, middle, end or random, got "later"`},
		{[]string{"--pauses", "-1", "testdata/replay/small.jsonl"}, "--pauses: must be in [0, 1000] per stream, got -1"},
		{[]string{"--pause-ms", "gamma:1,2", "testdata/replay/small.jsonl"}, `--pause-ms: unknown distribution kind "gamma"`},
		{[]string{"--smoothing", "33xs", "testdata/replay/small.jsonl"}, `--smoothing: "33xs": cadence: expected a duration such as 33ms or 0.5s, got "33xs"`},
		{[]string{"--smoothing", "33ms/0", "testdata/replay/small.jsonl"}, "delivery.smoothing.depth_ms: must be in (0, 60000] ms when smoothing is on, got 0"},
		{[]string{"--flush", "-5ms", "testdata/replay/small.jsonl"}, `--flush: "-5ms": expected a non-negative duration`},
		{[]string{"--network", "5g", "testdata/replay/small.jsonl"}, `--network: "5g": unknown profile; valid: none, broadband`},
		{[]string{"--frame-ms", "-1", "testdata/replay/small.jsonl"}, "--frame-ms: must be in [0, 1000] ms, got -1"},
		{[]string{"testdata/analyze/guidellm_v03.json"}, "records only each request's first and last token times: there are no chunks to replay"},
		{[]string{"testdata/replay/missing.jsonl"}, "no such file"},
	} {
		r := execCLI(t, append([]string{"replay"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("replay %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}
