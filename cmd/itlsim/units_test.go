package main

import (
	"strings"
	"testing"
)

// TestDurationFlagsTakeUnits: every flag that takes a time accepts a unit
// (2s, 250ms, 1m) as well as the plain number in the unit its name says,
// with the same result, and a bad value says what is expected.
func TestDurationFlagsTakeUnits(t *testing.T) {
	measured := "testdata/analyze/vllm_small.json"
	small := "testdata/replay/small.jsonl"
	for _, pair := range [][2][]string{
		{{"analyze", measured, "--slo-ttft", "2s", "--stall-threshold", "0.1s"}, {"analyze", measured, "--slo-ttft", "2000", "--stall-threshold", "100"}},
		{{"analyze", measured, "--itl-goodput", "250ms", "--slo-e2el", "1.5s"}, {"analyze", measured, "--itl-goodput", "250", "--slo-e2el", "1500"}},
		{{"replay", small, "--frame-ms", "16.7ms", "--slo-tpot", "50ms"}, {"replay", small, "--frame-ms", "16.7", "--slo-tpot", "50"}},
		{{"gate", "--baseline", small, "--candidate", small, "--slo-ttft", "1s", "--bootstrap", "0", "--metric", "slo_goodput"},
			{"gate", "--baseline", small, "--candidate", small, "--slo-ttft", "1000", "--bootstrap", "0", "--metric", "slo_goodput"}},
		{{"run", "--requests", "0", "--duration", "0.1m", "--slo-ttft", "2s"}, {"run", "--requests", "0", "--duration", "6", "--slo-ttft", "2000"}},
	} {
		a, b := mustRunCLI(t, pair[0]...), mustRunCLI(t, pair[1]...)
		if a.stdout != b.stdout {
			t.Errorf("%s and %s print different results", strings.Join(pair[0], " "), strings.Join(pair[1], " "))
		}
	}
	r := execCLI(t, "analyze", measured, "--slo-ttft", "soon")
	if r.code == 0 || !strings.Contains(r.stderr, "--slo-ttft: expected") || !strings.Contains(r.stderr, "2s") {
		t.Errorf("--slo-ttft soon: exit %d, stderr %q", r.code, r.stderr)
	}
}
