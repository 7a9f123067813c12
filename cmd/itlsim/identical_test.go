package main

import (
	"bytes"
	"strings"
	"testing"
)

// Compared runs whose summaries are the same (every figure and every
// per-stream population, classes included) get a note naming them; runs
// that differ get none.
func TestNoteIdenticalRuns(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Without hiccups (hiccup_rate 0) their length makes no difference;
	// the rate does.
	args := []string{"run", "--requests", "200", "--rate", "10,20", "--hiccup-ms", "100,200",
		"--set", "workload.classes=[{preset: chat, share: 0.5}, {preset: code, share: 0.5}]"}
	if code := Main(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "BY CLASS") {
		t.Fatalf("no class table:\n%s", stdout.String())
	}
	notes := strings.Count(stderr.String(), "give identical results")
	for _, want := range []string{"runs rate=10/hiccup_ms=100 and rate=10/hiccup_ms=200 give", "runs rate=20/hiccup_ms=100 and rate=20/hiccup_ms=200 give"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if notes != 2 {
		t.Errorf("%d notes of identical runs, want 2 (the rates differ):\n%s", notes, stderr.String())
	}
}
