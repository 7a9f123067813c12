package main

import (
	"strings"
	"testing"
)

// TestOneMeaningPerFlagName: --format names stdout's form in every command
// that prints results (run, gate, analyze, replay); the input's format is
// --input-format (analyze, replay, gate) and a trace's --workload-format
// (run, workload). The old spellings still work, with a note on stderr
// that gives the new one, and print exactly what the new spelling prints.
func TestOneMeaningPerFlagName(t *testing.T) {
	measured := "testdata/analyze/vllm_small.json"
	small := "testdata/replay/small.jsonl"
	trace := "testdata/workload/classes.csv"
	for _, c := range []struct {
		old, now []string
		note     string
	}{
		{[]string{"analyze", measured, "--format", "vllm"}, []string{"analyze", measured, "--input-format", "vllm"}, "--input-format"},
		{[]string{"analyze", measured, "--output", "markdown"}, []string{"analyze", measured, "--format", "markdown"}, "--format"},
		{[]string{"analyze", measured, "--format", "vllm", "--output", "json"}, []string{"analyze", measured, "--input-format", "vllm", "--format", "json"}, "--input-format"},
		{[]string{"replay", small, "--format", "itlsim", "--output", "markdown"}, []string{"replay", small, "--input-format", "itlsim", "--format", "markdown"}, "--input-format"},
		{[]string{"workload", "inspect", trace, "--format", "itlsim"}, []string{"workload", "inspect", trace, "--workload-format", "itlsim"}, "--workload-format"},
	} {
		old, now := mustRunCLI(t, c.old...), mustRunCLI(t, c.now...)
		if old.stdout != now.stdout {
			t.Errorf("%s prints other results than %s", strings.Join(c.old, " "), strings.Join(c.now, " "))
		}
		if !strings.Contains(old.stderr, "note") || !strings.Contains(old.stderr, c.note) {
			t.Errorf("%s: stderr %q gives no note naming %s", strings.Join(c.old, " "), old.stderr, c.note)
		}
		if now.stderr != "" {
			t.Errorf("%s: stderr %q, want none", strings.Join(c.now, " "), now.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", measured, "--format", "csv"}, "--format: must be table, markdown or json"},
		{[]string{"analyze", measured, "--input-format", "csv"}, "--input-format: unknown input format"},
		{[]string{"analyze", measured, "--format", "vllm", "--input-format", "aiperf"}, "--input-format"},
	} {
		r := execCLI(t, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want an error with %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}
