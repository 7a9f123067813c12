package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gate --html writes one report comparing baseline and candidate, named as such.
func TestGateWritesHTML(t *testing.T) {
	dir := t.TempDir()
	a, b, page := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "gate.html")
	for i, p := range []string{a, b} {
		var out, errb bytes.Buffer
		if code := Main([]string{"run", "--requests", "120", "--seed", []string{"1", "2"}[i], "--json", p}, &out, &errb); code != 0 {
			t.Fatalf("run: %s", errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"gate", "--baseline", a, "--candidate", b, "--html", page}, &out, &errb); code != 0 && code != 1 {
		t.Fatalf("gate exit %d: %s", code, errb.String())
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline: " + a, "candidate: " + b, "<table"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Bad input: no report is left behind.
	bad := filepath.Join(dir, "bad.html")
	if code := Main([]string{"gate", "--baseline", a, "--candidate", filepath.Join(dir, "missing.json"), "--html", bad}, &out, &errb); code != 2 {
		t.Errorf("missing candidate: exit %d, want 2", code)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a report was written for bad input")
	}
}
