package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTimelinesReproduceTheRun: --timelines writes every request with its
// outcome — rejected by admission, failed on a dropped connection, finished
// — so that analyzing the file gives the run's own summary: the same
// requests, rejections and failures by reason, latencies, per-stream ITL,
// goodputs and duration. (The pooled ITL is left out: a simulation keeps it
// in a histogram, analyze computes it exactly from every gap.)
func TestTimelinesReproduceTheRun(t *testing.T) {
	dir := t.TempDir()
	tl, res, an := filepath.Join(dir, "tl.jsonl"), filepath.Join(dir, "r.json"), filepath.Join(dir, "a.json")
	mustRunCLI(t, "run", "--requests", "300", "--rate", "60", "--admission", "max-queue",
		"--set", "scheduler.admission.max_queue=5", "--network", "flaky-wifi",
		"--set", "delivery.network.drops_per_s=0.05", "--set", "delivery.network.on_drop=fail",
		"--slo-ttft", "2000", "--timelines", tl, "--json", res)
	mustRunCLI(t, "analyze", tl, "--slo-ttft", "2000", "--json", an)
	sim, measured := summaryOf(t, res), summaryOf(t, an)
	if sim["rejected"].(float64) == 0 || sim["failed"] == nil {
		t.Fatalf("the scenario should reject and fail requests: %v rejected, %v failed", sim["rejected"], sim["failed"])
	}
	for _, k := range []string{"requests", "finished", "rejected", "rejected_by_reason", "failed", "failed_by_reason",
		"input_tokens", "output_tokens", "duration_s", "requests_per_s", "output_tokens_per_s",
		"ttft_ms", "tpot_ms", "e2el_ms", "streams_with_gaps", "single_chunk_streams",
		"stream_p50_itl_ms", "stream_p99_itl_ms", "stream_max_gap_ms", "stream_jitter_ratio", "unstable_stream_share",
		"itl_goodput", "slo_goodput", "slo_goodput_per_s", "stalls", "stalled_stream_share"} {
		if !reflect.DeepEqual(measured[k], sim[k]) {
			t.Errorf("%s: analyze of the timelines gives %v, the run %v", k, measured[k], sim[k])
		}
	}
	// The gate reads both documents, failed and rejected rows included,
	// and finds them equal: the three metrics named and unserved_share,
	// which every comparison gate checks.
	g := execCLI(t, "gate", "--baseline", res, "--candidate", an, "--bootstrap", "0", "--metric", "slo_goodput,ttft_p99,stream_p99_itl_p99")
	if g.code != 0 || strings.Count(g.stdout, "+0.0") != 4 {
		t.Errorf("gate of the run against analyze of its timelines: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
}

func summaryOf(t *testing.T, path string) map[string]any {
	t.Helper()
	var doc struct {
		Runs []struct {
			Summary map[string]any `json:"summary"`
		} `json:"runs"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Runs) != 1 {
		t.Fatalf("%s: %v, %d runs", path, err, len(doc.Runs))
	}
	return doc.Runs[0].Summary
}
