package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workload mix is reported per class, each class judged by its own SLO,
// and priorities reach the queue: under priority order the low-priority
// batch class waits longer than chat.
func TestRunWithClasses(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "mix.yaml")
	if err := os.WriteFile(scen, []byte(`
workload:
  rate: 25
  requests: 400
  classes:
    - {preset: chat, share: 0.7}
    - {preset: batch-report, share: 0.3}
scheduler:
  queue: priority
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", scen, "--json", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"BY CLASS", "chat", "batch-report"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	raw, _ := os.ReadFile(out)
	var doc struct {
		Runs []struct {
			Summary struct {
				Requests int `json:"requests"`
			} `json:"summary"`
			Classes map[string]struct {
				Requests  int    `json:"requests"`
				SLOLimits string `json:"slo_limits"`
				TTFT      struct {
					Mean float64 `json:"mean"`
				} `json:"ttft_ms"`
			} `json:"classes"`
			Streams []struct{} `json:"streams"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Runs[0].Summary
	chat, batch := doc.Runs[0].Classes["chat"], doc.Runs[0].Classes["batch-report"]
	if chat.Requests+batch.Requests != s.Requests || chat.Requests < 200 || batch.Requests < 60 {
		t.Fatalf("class requests %d + %d of %d", chat.Requests, batch.Requests, s.Requests)
	}
	if !strings.Contains(batch.SLOLimits, "e2el_ms=600000") || !strings.Contains(chat.SLOLimits, "ttft_ms=500") {
		t.Errorf("class SLOs: chat %q, batch %q", chat.SLOLimits, batch.SLOLimits)
	}
	if batch.TTFT.Mean <= chat.TTFT.Mean {
		t.Errorf("mean TTFT: batch (priority 10) %.0f ms, chat (priority 0) %.0f ms; want batch to wait longer", batch.TTFT.Mean, chat.TTFT.Mean)
	}
}
