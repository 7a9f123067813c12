package main

import (
	"strings"
	"testing"
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
		{[]string{"run", "--dataset-name", "sharegpt", "--dataset-path", "x.json"}, "--lengths-file"},
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

func TestRandomLenIsVLLMRange(t *testing.T) {
	for _, c := range []struct {
		n    int
		r    float64
		want string
	}{{1024, 0, "fixed:1024"}, {100, 0.25, "uniform:75,125"}, {3, 0.9, "uniform:1,6"}} {
		if got := randomLen(c.n, c.r); got != c.want {
			t.Errorf("randomLen(%d, %v) = %s, want %s", c.n, c.r, got, c.want)
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
	r = execCLI(t, "run", "--max-concurrency", "2")
	if r.code == 0 || !strings.Contains(r.stderr, "no in-flight cap") {
		t.Fatalf("run --max-concurrency: exit %d, stderr %q", r.code, r.stderr)
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
