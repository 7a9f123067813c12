package main

import (
	"bytes"
	"os"
	"runtime/debug"
	"testing"
)

// Main runs the collector at gcPercent unless GOGC is set, which wins.
func TestMainSetsGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	run := func() int {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"version"}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return debug.SetGCPercent(100)
	}
	if v, set := os.LookupEnv("GOGC"); set {
		t.Skipf("GOGC=%s is set", v)
	}
	if got := run(); got != gcPercent {
		t.Errorf("GC percent %d after Main, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "100")
	if got := run(); got != 100 {
		t.Errorf("GC percent %d after Main with GOGC=100, want it left at 100", got)
	}
}
