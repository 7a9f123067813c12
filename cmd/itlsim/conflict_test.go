package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConflictingSettingsAreNotIgnored: a setting that the others would
// silently override is honoured or refused, never dropped. A duration
// without a request count runs for that duration (it used to stop at the
// default 1000 requests); a duration and a count together, generator flags
// on a trace with its own arrivals and --pause-ms without --pauses are
// errors that name the flags.
func TestConflictingSettingsAreNotIgnored(t *testing.T) {
	dir := t.TempDir()
	requests := func(args ...string) float64 {
		t.Helper()
		out := filepath.Join(dir, "r.json")
		mustRunCLI(t, append(args, "--json", out)...)
		return summaryOf(t, out)["requests"].(float64)
	}
	// 4 s at 10 requests/s is about 40 requests, not the default 1000.
	if n := requests("run", "--duration", "4", "--rate", "10"); n < 20 || n > 60 {
		t.Errorf("--duration 4 --rate 10 ran %v requests, want about 40", n)
	}
	scen := writeScenario(t, "d.yaml", "workload:\n  rate: 10\n  duration_s: 4\n")
	if n := requests("run", scen); n < 20 || n > 60 {
		t.Errorf("a scenario with duration_s 4 at rate 10 ran %v requests, want about 40", n)
	}
	trace := filepath.Join(dir, "t.jsonl")
	mustRunCLI(t, "workload", "generate", writeScenario(t, "g.yaml", "workload:\n  requests: 20\n"), "-o", trace)
	measured := "testdata/replay/small.jsonl"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--requests", "50", "--duration", "4"}, []string{"requests", "duration_s", "not both"}},
		{[]string{"run", writeScenario(t, "both.yaml", "workload:\n  requests: 50\n  duration_s: 4\n")}, []string{"requests", "duration_s", "not both"}},
		{[]string{"run", "--workload", trace, "--rate", "5"}, []string{"--rate", "own arrival times"}},
		{[]string{"run", "--workload", trace, "--requests", "5"}, []string{"--requests", "own arrival times"}},
		{[]string{"run", "--workload", trace, "--input-len", "fixed:10"}, []string{"--input-len", "own"}},
		{[]string{"replay", measured, "--pause-ms", "300"}, []string{"--pause-ms", "--pauses"}},
		{[]string{"replay", measured, "--pause-at", "end"}, []string{"--pause-at", "--pauses"}},
	} {
		r := execCLI(t, c.args...)
		if r.code == 0 {
			t.Errorf("%s: exit 0, want an error", strings.Join(c.args, " "))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", strings.Join(c.args, " "), r.stderr, w)
			}
		}
	}
}

// TestScenarioGeneratorFieldsWithATrace: a scenario file that gives a rate
// (or a request count, lengths) beside a trace with its own arrivals is an
// error naming the file and the field, as the flags are.
func TestScenarioGeneratorFieldsWithATrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	mustRunCLI(t, "workload", "generate", writeScenario(t, "g.yaml", "workload:\n  requests: 20\n"), "-o", trace)
	scen := filepath.Join(dir, "s.yaml")
	writeFile(t, scen, "workload:\n  trace: t.jsonl\n  rate: 50\n")
	r := execCLI(t, "run", scen)
	if r.code == 0 || !strings.Contains(r.stderr, "s.yaml: workload.rate") || !strings.Contains(r.stderr, "own arrival times") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	writeFile(t, scen, "workload:\n  trace: t.jsonl\n  time_scale: 2\n")
	mustRunCLI(t, "run", scen)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
