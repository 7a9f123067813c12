package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports/ingest"
)

// An invocation written with vLLM bench's or GuideLLM's names prints
// exactly what the native flags print.
func TestBenchAliasesMatchNativeFlags(t *testing.T) {
	cases := []struct{ alias, native []string }{
		{[]string{"run", "--request-rate", "10", "--num-prompts", "50"}, []string{"run", "--rate", "10", "--requests", "50"}},
		{[]string{"run", "--request-rate", "10", "--max-requests", "30", "--rate", "10"}, []string{"run", "--rate", "10", "--requests", "30"}},
		{[]string{"run", "--max-seconds", "3", "--rate-type", "constant"}, []string{"run", "--duration", "3", "--arrival", "constant"}},
		{[]string{"run", "--num-prompts", "40", "--random-input-len", "512", "--random-output-len", "64", "--random-range-ratio", "0.5"},
			[]string{"run", "--requests", "40", "--input-len", "uniform:256,768", "--output-len", "uniform:32,96"}},
		{[]string{"run", "--num-prompts", "40", "--dataset-name", "random", "--ignore-eos", "--percentile-metrics", "ttft,itl"},
			[]string{"run", "--requests", "40", "--input-len", "fixed:1024", "--output-len", "fixed:128"}},
		{[]string{"run", "--num-prompts", "40", "--burstiness", "0.5", "--metric-percentiles", "25,50,99"},
			[]string{"run", "--requests", "40", "--arrival", "gamma", "--set", "workload.shape=0.5", "--percentiles", "25,50,99"}},
		{[]string{"sweep", "--num-prompts", "30", "--rate", "2,4"}, []string{"sweep", "--requests", "30", "--rate", "2,4"}},
	}
	for _, c := range cases {
		a := mustRunCLI(t, c.alias...)
		n := mustRunCLI(t, c.native...)
		if a.stdout != n.stdout {
			t.Errorf("%v printed\n%s\nwant (as %v)\n%s", c.alias, a.stdout, c.native, n.stdout)
		}
	}
}

func TestBenchAliasErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--request-rate", "10", "--rate", "5"}, "--request-rate 10 and --rate 5 disagree"},
		{[]string{"run", "--request-rate", "inf"}, "finite rate"},
		{[]string{"run", "--random-range-ratio", "1.5"}, "expected a ratio in [0, 1)"},
		{[]string{"run", "--dataset-name", "sonnet"}, "expected random"},
		{[]string{"run", "--dataset-name", "sharegpt", "--dataset-path", "x.json"}, "does not tokenize"},
		{[]string{"run", "--burstiness", "0"}, "expected a shape > 0"},
		{[]string{"run", "--rate-type", "sweep"}, "expected constant, poisson or synchronous"},
		{[]string{"run", "--percentile-metrics", "ttft,foo"}, `"foo"`},
		{[]string{"run", "--random-input-len", "100", "--input-len", "fixed:50"}, "disagree"},
	}
	for _, c := range cases {
		r := execCLI(t, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want an error containing %q", c.args, r.code, r.stderr, len(r.stdout), c.want)
		}
	}
}

// record takes the aliases too: --request-rate, --num-prompts and
// --max-concurrency (its own --concurrency).
func TestRecordBenchAliases(t *testing.T) {
	out := t.TempDir() + "/rec.jsonl"
	r := execCLI(t, "record", hostileServer(t), "--served-model-name", "m", "--request-rate", "1000", "--num-prompts", "5",
		"--max-concurrency", "2", "--random-input-len", "4", "--random-output-len", "2", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "5 requests sent") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if n := len(readLines(t, out)); n != 5 {
		t.Fatalf("%d lines recorded, want 5", n)
	}
	r = execCLI(t, "record", hostileServer(t), "--max-concurrency", "2", "--concurrency", "3", "-o", out)
	if r.code == 0 || !strings.Contains(r.stderr, "disagree") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// run --max-concurrency caps the requests in flight as vLLM bench's
// semaphore does: it is workload.max_concurrency; a cap never reached
// changes nothing (the front end still applies, byte for byte); a cap of 2
// holds at most 2 requests in flight, and queueing moves from the server
// to the client, so TTFT (measured from the send) falls while the run
// lasts longer.
func TestRunMaxConcurrency(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--request-rate", "8", "--num-prompts", "150", "--format", "json"}
	plain := mustRunCLI(t, base...).stdout
	if got := mustRunCLI(t, append(base, "--max-concurrency", "100000")...).stdout; withoutCapLine(got) != plain {
		t.Errorf("a cap never reached changed the run")
	}
	alias := mustRunCLI(t, append(base, "--max-concurrency", "2")...).stdout
	native := mustRunCLI(t, append(base, "--set", "workload.max_concurrency=2")...).stdout
	if alias != native {
		t.Errorf("--max-concurrency 2 and --set workload.max_concurrency=2 differ")
	}
	streams := dir + "/s.csv"
	mustRunCLI(t, "run", "--request-rate", "8", "--num-prompts", "150", "--max-concurrency", "2", "--streams", streams)
	rows := readCSV(t, streams)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	type span struct{ start, end float64 }
	var spans []span
	for _, r := range rows[1:] {
		a, e := parseF(t, r[col["arrival_s"]]), parseF(t, r[col["e2el_ms"]])
		spans = append(spans, span{a, a + e/1000})
	}
	for _, s := range spans {
		in := 0
		for _, o := range spans {
			if o.start <= s.start && s.start < o.end-1e-6 { // a request sent as one ends: not both in flight
				in++
			}
		}
		if in > 2 {
			t.Fatalf("%d requests in flight at %.6f s under a cap of 2", in, s.start)
		}
	}
	ttft := func(doc string) float64 {
		var d struct {
			Runs []struct {
				Summary struct {
					TTFT struct {
						P50 float64 `json:"p50"`
					} `json:"ttft_ms"`
					DurationS float64 `json:"duration_s"`
				} `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		return d.Runs[0].Summary.TTFT.P50
	}
	if a, b := ttft(plain), ttft(native); !(b < a) {
		t.Errorf("TTFT p50 %g ms capped at 2 vs %g ms uncapped: the queue moves to the client", b, a)
	}
	for _, bad := range []string{"0", "-3", "x", "1.5"} {
		if r := execCLI(t, "run", "--max-concurrency", bad); r.code == 0 || !strings.Contains(r.stderr, "--max-concurrency") {
			t.Errorf("--max-concurrency %s: exit %d, %q", bad, r.code, r.stderr)
		}
	}
	if r := execCLI(t, "run", "--arrival", "closed", "--set", "workload.users=3", "--max-concurrency", "2"); r.code == 0 ||
		!strings.Contains(r.stderr, "workload.max_concurrency: a closed loop's users are its cap") {
		t.Errorf("a closed loop with a cap: exit %d, %q", r.code, r.stderr)
	}
}

// A stream of one chunk has no token rate: the table says n/a, not the
// search's ceiling (100000), and its --json row has no fluid_tokens_per_s.
func TestSingleChunkFluidRateIsNA(t *testing.T) {
	doc := t.TempDir() + "/r.json"
	r := mustRunCLI(t, "run", "--requests", "20", "--output-len", "fixed:1", "--json", doc)
	if !strings.Contains(r.stdout, "fluid tokens/s p10/p50") || strings.Contains(r.stdout, "100000") {
		t.Fatalf("single-chunk streams:\n%s", r.stdout)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "fluid tokens/s") && !strings.Contains(line, "n/a") {
			t.Errorf("want n/a: %s", line)
		}
	}
	if b := string(mustRead(t, doc)); strings.Contains(b, "fluid_tokens_per_s\"") {
		t.Errorf("--json has a fluid_tokens_per_s for a single-chunk stream")
	}
	r = mustRunCLI(t, "run", "--requests", "20")
	if strings.Contains(r.stdout, "n/a/") || !strings.Contains(r.stdout, "fluid tokens/s p10/p50") {
		t.Fatalf("multi-chunk streams lost their fluid rate:\n%s", r.stdout)
	}
}

// A class's own slo: keeps its preset's other limits: code with its own
// ttft_ms (the preset's value) is judged exactly as the bare preset.
func TestClassSLOKeepsPresetLimitsCLI(t *testing.T) {
	own := mustRunCLI(t, "run", "--set", "workload.classes=[{preset: code, share: 1, slo: {ttft_ms: 100}}]", "--rate", "12", "--requests", "300")
	bare := mustRunCLI(t, "run", "--set", "workload.classes=[{preset: code, share: 1}]", "--rate", "12", "--requests", "300")
	if own.stdout != bare.stdout {
		t.Errorf("code with slo {ttft_ms: 100}:\n%s\nthe preset alone:\n%s", own.stdout, bare.stdout)
	}
}

// withoutCapLine drops the scenario's max_concurrency line from a JSON
// document, the one line a cap adds.
func withoutCapLine(doc string) string {
	var keep []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.Contains(l, `"max_concurrency"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	return rows
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// validate applies a measured run's own in-flight cap; --max-concurrency
// may restate it but not contradict it.
func TestValidateMaxConcurrency(t *testing.T) {
	r := ingest.VLLMResult{Backend: "vllm", ModelID: "m", RequestRate: math.Inf(1), MaxConcurrency: 2,
		Summary: map[string]float64{"duration": 3}}
	for i := range 6 {
		r.Requests = append(r.Requests, ingest.VLLMRequest{InputLen: 128, OutputLen: 32, TTFT: 0.05,
			ITLs: slices.Repeat([]float64{0.02}, 31), Latency: 0.05 + 31*0.02, StartTime: float64(i/2) * 0.7})
	}
	var buf bytes.Buffer
	if err := ingest.WriteVLLMResult(&buf, r); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/capped.json"
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	same := mustRunCLI(t, "validate", file).stdout
	if !strings.Contains(same, "at most 2 in flight") {
		t.Errorf("validate does not say it applied the file's cap:\n%s", same)
	}
	if got := mustRunCLI(t, "validate", file, "--max-concurrency", "2").stdout; got != same {
		t.Errorf("restating the file's cap changed the answer")
	}
	if res := execCLI(t, "validate", file, "--max-concurrency", "3"); res.code == 0 || !strings.Contains(res.stderr, "capped requests in flight at 2, not 3") {
		t.Errorf("a cap that contradicts the file: exit %d, %q", res.code, res.stderr)
	}
}

// --dataset-name sharegpt --dataset-path F.csv samples F's token lengths
// as --lengths-file does, keeping only the pairs vLLM's ShareGPT sampler
// keeps; a raw ShareGPT JSON (untokenized) and a missing path are refused.
func TestShareGPTDataset(t *testing.T) {
	dir := t.TempDir()
	csvPath := dir + "/sharegpt.csv"
	// Only the first two pairs pass vLLM's filter (prompt and output ≥ 4,
	// prompt ≤ 1024, both ≤ 2048).
	body := "num_prefill_tokens,num_decode_tokens\n100,50\n300,200\n2,80\n90,3\n1500,10\n1000,1100\n"
	if err := os.WriteFile(csvPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := mustRunCLI(t, "run", "--dataset-name", "sharegpt", "--dataset-path", csvPath, "--num-prompts", "40", "--streams", dir+"/a.csv").stdout
	native := mustRunCLI(t, "run", "--lengths-file", csvPath, "--set", "workload.lengths_filter=vllm-sharegpt", "--requests", "40", "--streams", dir+"/b.csv").stdout
	if alias != native {
		t.Errorf("the alias and --lengths-file with the filter differ")
	}
	rows := readCSV(t, dir+"/a.csv")
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		if p, o := r[col["input_tokens"]], r[col["output_tokens"]]; !(p == "100" && o == "50" || p == "300" && o == "200") {
			t.Fatalf("a request drew (%s, %s), a pair vLLM's ShareGPT filter drops", p, o)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-name", "sharegpt"}, "needs --dataset-path"},
		{[]string{"--dataset-name", "sharegpt", "--dataset-path", dir + "/ShareGPT_V3.json"}, "does not tokenize"},
		{[]string{"--dataset-path", csvPath}, "needs --dataset-name sharegpt"},
		{[]string{"--dataset-name", "sonnet"}, "expected random or sharegpt"},
		{[]string{"--set", "workload.lengths_filter=vllm-sharegpt"}, "workload.lengths_filter: filters the pairs of lengths_file"},
		{[]string{"--lengths-file", csvPath, "--set", "workload.lengths_filter=x"}, "unknown filter"},
	} {
		if r := execCLI(t, append([]string{"run"}, c.args...)...); r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("run %v: exit %d, %q; want an error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	none := dir + "/none.csv"
	os.WriteFile(none, []byte("num_prefill_tokens,num_decode_tokens\n2,2\n"), 0o644)
	if r := execCLI(t, "run", "--dataset-name", "sharegpt", "--dataset-path", none); r.code == 0 || !strings.Contains(r.stderr, "no pair of its 1 passes lengths_filter vllm-sharegpt") {
		t.Errorf("a file with no valid pair: exit %d, %q", r.code, r.stderr)
	}
}
