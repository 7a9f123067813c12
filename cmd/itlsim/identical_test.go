package main

import (
	"strings"
	"testing"
)

// Compared runs whose summaries are the same (every figure and every
// per-stream population, classes included) get a note naming them; runs
// that differ get none.
func TestNoteIdenticalRuns(t *testing.T) {
	// Without hiccups (hiccup_rate 0) their length makes no difference;
	// the rate does.
	r := mustRunCLI(t, "run", "--requests", "200", "--rate", "10,20", "--hiccup-ms", "100,200",
		"--set", "workload.classes=[{preset: chat, share: 0.5}, {preset: code, share: 0.5}]")
	if !strings.Contains(r.stdout, "BY CLASS") {
		t.Fatalf("no class table:\n%s", r.stdout)
	}
	notes := strings.Count(r.stderr, "give identical results")
	for _, want := range []string{"runs rate=10/hiccup_ms=100 and rate=10/hiccup_ms=200 give", "runs rate=20/hiccup_ms=100 and rate=20/hiccup_ms=200 give"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if notes != 2 {
		t.Errorf("%d notes of identical runs, want 2 (the rates differ):\n%s", notes, r.stderr)
	}
}
