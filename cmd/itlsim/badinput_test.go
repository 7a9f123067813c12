package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// badCall is one bad invocation: args with {dir} standing for a fresh
// folder holding files (name → content). want, when set, is a piece of
// the error (the flag, file, line or field it names).
type badCall struct {
	args  []string
	files map[string]string
	want  string
}

// Files the bad inputs read.
const (
	goodScenario = "workload:\n  rate: 4\n  requests: 20\n"
	vllmResult   = `{"backend":"vllm","request_rate":4,"duration":10,"completed":1,"input_lens":[10],"output_lens":[3],"ttfts":[0.1],"itls":[[0.01,0.01]],"generated_texts":[""],"errors":[""]}`
)

// badInputs lists the bad invocations over every command: flags out of
// range or of the wrong type, malformed scenario files, result, stream,
// trace and step files, and shard folders.
func badInputs() []badCall {
	var cs []badCall
	add := func(want string, files map[string]string, args ...string) {
		cs = append(cs, badCall{args: args, files: files, want: want})
	}
	// Flags of run, each with values that are not what it takes.
	numeric := map[string][]string{
		"--rate":                   {"-1", "0", "abc", "NaN", "Inf", "1e400"},
		"--requests":               {"-5", "abc", "1.5"},
		"--duration":               {"-1", "NaN", "abc"},
		"--tp":                     {"0", "-2", "x", "3"},
		"--max-num-seqs":           {"-1", "x", "1e3"},
		"--max-num-batched-tokens": {"-1", "y", "1.5"},
		"--num-gpu-blocks":         {"-1", "x", "2000000000"},
		"--noise-cv":               {"-1", "NaN", "x"},
		"--hiccup-rate":            {"-1", "x"},
		"--hiccup-ms":              {"-1", "x"},
		"--seed":                   {"-1", "x"},
		"--replicas":               {"0", "-1", "x"},
		"--max-memory":             {"x", "-1GiB", "0", "1KiB"},
	}
	for _, flag := range sortedKeys(numeric) {
		for _, v := range numeric[flag] {
			add("", nil, "run", "--requests", "20", flag, v, "--json", "{dir}/out.json")
		}
	}
	names := map[string][]string{
		"--model":        {"no-such-model", ""},
		"--gpu":          {"no-such-gpu", ""},
		"--policy":       {"no-such-policy"},
		"--admission":    {"nope"},
		"--queue":        {"nope"},
		"--preemption":   {"nope"},
		"--victim":       {"nope"},
		"--cost-model":   {"nope"},
		"--arrival":      {"nope"},
		"--router":       {"nope"},
		"--network":      {"nope"},
		"--input-len":    {"fixed:-1", "nope:1", "uniform:5,1", "lognormal:x"},
		"--output-len":   {"fixed:0", "normal:1", "table:a=b"},
		"--format":       {"xml", ""},
		"--percentiles":  {"101", "-1", "x", "50,y"},
		"--slo":          {"ttft", "ttft:p99<=", "nope:p99<=1s", "ttft:p200<=1s"},
		"--set":          {"no.such.field=1", "workload.rate=x", "seed", "=1", "workload.requests=-1"},
		"--vary":         {"workload.rate", "no.field=1,2", "workload.rate="},
		"--workload":     {"{dir}/missing.jsonl"},
		"--profile":      {"{dir}/missing.yaml"},
		"--lengths-file": {"{dir}/missing.csv"},
	}
	for _, flag := range sortedKeys(names) {
		for _, v := range names[flag] {
			add("", nil, "run", "--requests", "20", flag, v, "--json", "{dir}/out.json")
		}
	}
	add("", nil, "run", "--requests", "20", "extra-arg", "another")
	add("", nil, "run", "--no-such-flag")
	add("", nil, "run", "--seed", "1", "--set", "seed=2")
	add("", nil, "run", "--json", "{dir}")
	add("", nil, "run", "--json", "{dir}/no-folder/out.json")
	add("", nil, "run", "--json", "{dir}/out.json", "--csv", "{dir}/out.json")
	add("", map[string]string{"s.yaml": goodScenario}, "run", "{dir}/s.yaml", "--json", "{dir}/s.yaml")
	add("", map[string]string{"s.yaml": goodScenario}, "run", "{dir}/s.yaml", "--html", "{dir}/s.yaml")

	// Scenario files, each wrong in one field, through run, sweep and
	// capacity.
	scenarios := []struct{ body, want string }{
		{"workload:\n  rate: -4\n", "rate"},
		{"workload:\n  rate: abc\n", "rate"},
		{"workload:\n  requests: 1.5\n", "requests"},
		{"no_such_field: 1\n", "no_such_field"},
		{"workload:\n  no_such: 1\n", "no_such"},
		{"scheduler:\n  max_num_seqs: -1\n", "max_num_seqs"},
		{"scheduler:\n  policy: nope\n", "policy"},
		{"kvcache:\n  block_size: 0\n", "block_size"},
		{"kvcache:\n  gpu_memory_utilization: 2\n", "gpu_memory_utilization"},
		{"cost:\n  model: nope\n", "model"},
		{"cost:\n  roofline:\n    compute_efficiency: 0\n", "compute_efficiency"},
		{"cost:\n  model: linear\n  linear:\n    c0_us: -1\n", "c0_us"},
		{"model: nope\n", "model"},
		{"gpu: nope\n", "gpu"},
		{"tp: 0\n", "tp"},
		{"seed: -1\n", "seed"},
		{"workload: [1, 2]\n", "workload"},
		{"workload:\n  rate: 4\n  rate: 5\n", "rate"},
		{"\t- bad: yaml\n", ""},
		{"{", ""},
		{"workload:\n  input_len: fixed:-3\n", "input_len"},
		{"workload:\n  arrival: nope\n", "arrival"},
		{"workload:\n  requests: 10\n  duration_s: 5\n", "duration_s"},
		{"slo:\n  - ttft\n", "slo"},
		{"compare:\n  - nope\n", "compare"},
		{"cluster:\n  replicas: -1\n", "replicas"},
		{"cluster:\n  router:\n    name: nope\n", ""},
		{"delivery:\n  network: nope\n", "network"},
	}
	for _, s := range scenarios {
		files := map[string]string{"s.yaml": s.body}
		add(s.want, files, "run", "{dir}/s.yaml", "--json", "{dir}/out.json")
		add(s.want, files, "sweep", "{dir}/s.yaml", "--rate", "1,2", "--json", "{dir}/out.json")
		add(s.want, files, "capacity", "{dir}/s.yaml", "--slo", "ttft:p99<=1s", "--json", "{dir}/out.json")
	}
	add("", map[string]string{"s.yaml": ""}, "run", "{dir}/missing.yaml")
	add("", nil, "run", "{dir}")

	// sweep and capacity flags.
	for _, r := range []string{"", "0", "-1", "a:b:c", "1:0:1", "1:10:0", "NaN", "1,,2", "1:1e9:1e-9"} {
		add("", nil, "sweep", "--rate", r, "--requests", "20", "--json", "{dir}/out.json")
	}
	for _, a := range [][]string{
		{"--slo", "nope"}, {"--slo", "ttft:p99<=1s", "--start-rate", "-1"}, {"--slo", "ttft:p99<=1s", "--seeds", "0"},
		{"--slo", "ttft:p99<=1s", "--target-rate", "-5"}, {"--slo", "ttft:p99<=1s", "--target-field", "tp"},
		{"--slo", "ttft:p99<=1s", "--target-rate", "5", "--target-field", "no.such.field"},
		{"--slo", "ttft:p99<=1s", "--gpu-price", "no-such-gpu=3"}, {"--slo", "ttft:p99<=1s", "-j", "-1"},
		{"--slo", "ttft:p99<=1s", "--drain", "2"}, {"--slo", "ttft:p99<=1s", "--emit-k8s-job", "--k8s-name", "Bad_Name\n"},
	} {
		add("", nil, append(append([]string{"capacity"}, a...), "--json", "{dir}/out.json")...)
	}
	add("", nil, "sweep", "--rate", "1", "--shard-count", "2", "--out", "{dir}/shards")
	add("", nil, "sweep", "--rate", "1", "--shard-index", "5", "--shard-count", "2", "--out", "{dir}/shards")
	add("", nil, "sweep", "--rate", "1", "--shard-count", "-2", "--out", "{dir}/shards")

	// Files for analyze, gate, report, replay, validate and calibrate.
	results := []struct{ body, want string }{
		{"", ""},
		{"{", ""},
		{"[]", ""},
		{"null", ""},
		{`{"runs": 5}`, ""},
		{`{"schema_version": 999, "runs": []}`, "schema_version"},
		{"not json at all", ""},
		{`{"a":1}{"b":2}`, ""},
		{"\x00\x01\x02", ""},
		{`{"backend":"vllm","request_rate":4,"duration":10,"ttfts":"x"}`, ""},
		{`{"backend":"vllm","ttfts":[0.1],"itls":[[0.01]],"input_lens":[10,11]}`, ""},
	}
	for _, r := range results {
		files := map[string]string{"in.json": r.body}
		add(r.want, files, "analyze", "{dir}/in.json", "--json", "{dir}/out.json")
		add(r.want, files, "gate", "--candidate", "{dir}/in.json", "--slo", "ttft:p99<=1s", "--json", "{dir}/out.json")
		add(r.want, files, "gate", "--baseline", "{dir}/in.json", "--candidate", "{dir}/in.json", "--json", "{dir}/out.json")
		add("", files, "report", "{dir}/in.json", "-o", "{dir}/out.html")
		add(r.want, files, "replay", "{dir}/in.json", "--json", "{dir}/out.json")
		add(r.want, files, "validate", "{dir}/in.json", "--json", "{dir}/out.json")
		add(r.want, files, "calibrate", "{dir}/in.json", "-o", "{dir}/out.yaml")
	}
	jsonl := []string{
		"{\"id\":1}\n{",
		"not json\n",
		"{\"arrival_s\": -1, \"input_tokens\": 10, \"output_tokens\": 5}\n",
		"{\"arrival_s\": \"x\"}\n",
		"[1,2,3]\n",
	}
	for _, body := range jsonl {
		files := map[string]string{"in.jsonl": body}
		add("in.jsonl", files, "analyze", "{dir}/in.jsonl", "--json", "{dir}/out.json")
		add("in.jsonl", files, "workload", "inspect", "{dir}/in.jsonl")
		add("in.jsonl", files, "workload", "generate", "{dir}/in.jsonl", "-o", "{dir}/out.jsonl")
		add("in.jsonl", files, "run", "--workload", "{dir}/in.jsonl", "--json", "{dir}/out.json")
	}
	steps := []string{
		"",
		"a,b,c\n1,2,3\n",
		"prefill_tokens,decode_seqs,duration_ms\n1,2,NaN\n",
		"prefill_tokens,decode_seqs,duration_ms\n1,2,Inf\n",
		"prefill_tokens,decode_seqs,duration_ms\n-1,2,3\n",
		"prefill_tokens,decode_seqs,duration_ms\nx,2,3\n",
	}
	for _, body := range steps {
		add("", map[string]string{"steps.csv": body}, "calibrate", "--steps", "{dir}/steps.csv", "-o", "{dir}/out.yaml")
	}
	add("", map[string]string{"v.json": vllmResult}, "validate", "{dir}/v.json", "--json", "{dir}/v.json")
	add("", map[string]string{"v.json": vllmResult}, "analyze", "{dir}/v.json", "--json", "{dir}/v.json")
	add("", map[string]string{"v.json": vllmResult}, "analyze", "{dir}/v.json", "--input-format", "nope")
	add("", map[string]string{"v.json": vllmResult}, "analyze", "{dir}/v.json", "--percentiles", "200")
	add("", map[string]string{"v.json": vllmResult}, "gate", "--candidate", "{dir}/v.json", "--slo", "ttft:p99<=1s", "--tolerance", "abc")
	add("", map[string]string{"v.json": vllmResult}, "gate", "--baseline", "{dir}/v.json", "--candidate", "{dir}/v.json", "--tolerance", "5")
	add("", map[string]string{"v.json": vllmResult}, "gate", "--baseline", "{dir}/v.json", "--candidate", "{dir}/v.json", "--confidence", "2")
	add("", map[string]string{"v.json": vllmResult}, "replay", "{dir}/v.json", "--pauses", "-1")
	add("", map[string]string{"v.json": vllmResult}, "replay", "{dir}/v.json", "--smoothing", "nope")
	add("", map[string]string{"v.json": vllmResult}, "replay", "{dir}/v.json", "--pause-at", "nowhere")
	add("", map[string]string{"v.json": vllmResult}, "report", "{dir}/v.json", "-o", "{dir}/v.json")
	add("", nil, "analyze")
	add("", nil, "analyze", "{dir}/missing.json")
	add("", nil, "gate")
	add("", nil, "gate", "--candidate", "{dir}/missing.json", "--slo", "ttft:p99<=1s")
	add("", nil, "report")
	add("", nil, "validate")
	add("", nil, "calibrate")
	add("", nil, "workload", "inspect", "{dir}/missing.csv")
	add("", nil, "workload", "generate", "{dir}/missing.csv")
	add("", nil, "workload", "inspect", "{dir}", "--window", "5,1")

	// Shard folders for merge.
	shardDirs := []map[string]string{
		{},
		{"plan.json": ""},
		{"plan.json": "{"},
		{"plan.json": `{"schema_version": 999}`},
		{"plan.json": `{"schema_version": 2, "command": "nope"}`},
		{"plan.json": "[]"},
		{"plan.json": "null"},
	}
	for _, files := range shardDirs {
		add("", files, "merge", "{dir}", "--json", "{dir}/../out.json")
	}
	add("", nil, "merge")
	add("", nil, "merge", "{dir}/missing")
	add("", map[string]string{"plan.json": "{}"}, "merge", "{dir}", "--json", "{dir}/plan.json")

	// record and serve, refused before they connect or listen.
	for _, a := range [][]string{
		{"record"}, {"record", "not a url", "-o", "{dir}/out.jsonl"}, {"record", "ftp://x", "-o", "{dir}/out.jsonl"},
		{"record", "http://127.0.0.1:1", "--rate", "-1", "-o", "{dir}/out.jsonl"},
		{"record", "http://127.0.0.1:1", "--concurrency", "-1", "-o", "{dir}/out.jsonl"},
		{"serve", "--addr", "not-an-addr:xx"}, {"serve", "--time-scale", "-1"}, {"serve", "--rate", "-1"},
		{"serve", "--exit-after", "-1"}, {"serve", "{dir}/missing.yaml"},
	} {
		add("", nil, a...)
	}
	// The memory estimate counts a trace's rows and a closed loop's request
	// bound (about 4 KiB each), refused up front under a small --max-memory.
	add("--max-memory", map[string]string{"s.yaml": "workload:\n  arrival: closed\n  users: 10\n  requests: 100000\n"},
		"run", "{dir}/s.yaml", "--max-memory", "256MiB", "--json", "{dir}/out.json")
	add("--max-memory", map[string]string{"t.jsonl": strings.Repeat(`{"arrival_s":0,"input_tokens":8,"output_tokens":4}`+"\n", 20000)},
		"run", "--workload", "{dir}/t.jsonl", "--max-memory", "128MiB", "--json", "{dir}/out.json")
	add("--max-memory", map[string]string{"t.csv": "TIMESTAMP,ContextTokens,GeneratedTokens\n" + strings.Repeat("2023-11-16 18:15:46.6805900,374,44\n", 20000)},
		"run", "--workload", "{dir}/t.csv", "--max-memory", "128MiB", "--json", "{dir}/out.json")
	// A closed loop bounded by its duration alone is estimated from its
	// users' cycle (not one request per user); a vLLM benchmark result by
	// its input_lens, a ServeGen client by its expected requests.
	add("--max-memory", map[string]string{"s.yaml": "workload:\n  arrival: closed\n  users: 1000\n  requests: 0\n  duration_s: 1e7\n"},
		"run", "{dir}/s.yaml", "--json", "{dir}/out.json")
	add("--max-memory", map[string]string{"v.json": `{"request_rate": 10, "input_lens": [` + strings.Repeat("100, ", 19999) + `100], "output_lens": [` + strings.Repeat("10, ", 19999) + `10]}`},
		"run", "--workload", "{dir}/v.json", "--max-memory", "128MiB", "--json", "{dir}/out.json")
	add("--max-memory", map[string]string{"c-trace.csv": "0,100,4,Gamma,1,0.01\n600,0,0,,0,0\n",
		"c-dataset.json": `{"0": {"input_tokens": "{100: 1}", "output_tokens": "{10: 1}"}}`},
		"run", "--workload", "{dir}/c-trace.csv", "--max-memory", "128MiB", "--json", "{dir}/out.json")
	add("", nil, "cost", "check", "--data", "{dir}/missing")
	add("", nil, "presets", "extra")
	add("", nil, "version", "extra")
	add("", nil, "no-such-command")
	return cs
}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestBadInputs runs every bad invocation and holds what the docs promise
// (docs/bad-input.md): a non-zero exit, a one-line error (naming what it
// should), no panic, inputs unchanged and no output file.
func TestBadInputs(t *testing.T) {
	cases := badInputs()
	if len(cases) < 200 {
		t.Fatalf("%d bad inputs, want at least 200", len(cases))
	}
	for i, c := range cases {
		parent := t.TempDir()
		dir := filepath.Join(parent, "d")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		before := map[string][32]byte{}
		for name, body := range c.files {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			before[name] = sha256.Sum256([]byte(body))
		}
		args := make([]string, len(c.args))
		for j, a := range c.args {
			args[j] = strings.ReplaceAll(a, "{dir}", dir)
		}
		label := fmt.Sprintf("#%d itlsim %q (files %q)", i, c.args, c.files)
		r := execCLI(t, args...)
		msg := strings.TrimRight(r.stderr, "\n")
		switch {
		case r.code == 0:
			t.Errorf("%s: exit 0, want an error\nstdout: %.200s", label, r.stdout)
		case strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine "):
			t.Errorf("%s: panicked: %.400s", label, r.stderr)
		case msg == "" || strings.Contains(msg, "\n"):
			t.Errorf("%s: want a one-line error, got %q", label, r.stderr)
		case c.want != "" && !strings.Contains(msg, c.want):
			t.Errorf("%s: error %q does not name %q", label, msg, c.want)
		}
		for _, root := range []string{dir, parent} {
			ents, err := os.ReadDir(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if root == parent && e.Name() == "d" {
					continue
				}
				want, ok := before[e.Name()]
				if root == parent || !ok {
					t.Errorf("%s: wrote %s", label, filepath.Join(root, e.Name()))
					continue
				}
				b, err := os.ReadFile(filepath.Join(root, e.Name()))
				if err != nil || sha256.Sum256(b) != want {
					t.Errorf("%s: changed its input %s", label, e.Name())
				}
			}
		}
	}
}
