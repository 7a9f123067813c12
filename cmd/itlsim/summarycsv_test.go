package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSummaryCSV: --summary-csv writes one row per run with the summary's
// figures under the JSON's names, the same numbers as the JSON, and empty
// cells for what a measured file cannot say.
func TestSummaryCSV(t *testing.T) {
	dir := t.TempDir()
	sum, doc := filepath.Join(dir, "s.csv"), filepath.Join(dir, "r.json")
	mustRunCLI(t, "run", "--requests", "40", "--policy", "chunked,prefill-first", "--summary-csv", sum, "--json", doc)
	rows, err := csv.NewReader(bytes.NewReader(mustRead(t, sum))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "run" || rows[1][0] != "chunked" || rows[2][0] != "prefill-first" {
		t.Fatalf("summary CSV rows %v: want a header and one row per run", rows)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var d struct {
		Runs []struct {
			Summary struct {
				Requests int `json:"requests"`
				TTFT     struct {
					P99 float64 `json:"p99"`
				} `json:"ttft_ms"`
				StreamP99 struct {
					P99 float64 `json:"p99"`
				} `json:"stream_p99_itl_ms"`
				ITLGoodput float64 `json:"itl_goodput"`
			} `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(mustRead(t, doc), &d); err != nil {
		t.Fatal(err)
	}
	for i, r := range d.Runs {
		row := rows[i+1]
		for name, want := range map[string]float64{"requests": float64(r.Summary.Requests), "ttft_ms_p99": r.Summary.TTFT.P99,
			"stream_p99_itl_ms_p99": r.Summary.StreamP99.P99, "itl_goodput": r.Summary.ITLGoodput} {
			k, ok := col[name]
			if !ok {
				t.Fatalf("no column %s in %v", name, rows[0])
			}
			if got, err := strconv.ParseFloat(row[k], 64); err != nil || got != want {
				t.Errorf("run %s %s: CSV %q, JSON %v", row[0], name, row[k], want)
			}
		}
	}
	// A file without gaps: its gap figures and server-side ones are empty.
	mustRunCLI(t, "analyze", "testdata/analyze/guidellm_v03.json", "--summary-csv", sum)
	rows, _ = csv.NewReader(bytes.NewReader(mustRead(t, sum))).ReadAll()
	if len(rows) != 2 {
		t.Fatalf("analyze summary CSV %v", rows)
	}
	for _, name := range []string{"stream_p99_itl_ms_p99", "preemptions_swap", "stall_ms_decode"} {
		if v := rows[1][col[name]]; v != "" {
			t.Errorf("guidellm %s = %q, want empty", name, v)
		}
	}
	if v := rows[1][col["ttft_ms_p99"]]; v == "" {
		t.Errorf("guidellm ttft_ms_p99 empty")
	}
}
