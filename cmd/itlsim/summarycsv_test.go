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

// The summary CSV has a column for every percentile --percentiles chooses
// (p95 by default), besides p50, p90 and p99, with the JSON's value.
func TestSummaryCSVHonoursPercentiles(t *testing.T) {
	for _, c := range []struct {
		pcts string
		want []string
	}{{"", []string{"ttft_ms_p95", "stream_p99_itl_ms_p95"}}, {"50,99.9", []string{"ttft_ms_p99.9", "e2el_ms_p99.9", "ttft_ms_p90"}}} {
		dir := t.TempDir()
		sum, doc := filepath.Join(dir, "s.csv"), filepath.Join(dir, "r.json")
		args := []string{"run", "--requests", "40", "--summary-csv", sum, "--json", doc}
		if c.pcts != "" {
			args = append(args, "--percentiles", c.pcts)
		}
		mustRunCLI(t, args...)
		rows, err := csv.NewReader(bytes.NewReader(mustRead(t, sum))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, name := range rows[0] {
			col[name] = i
		}
		for _, w := range c.want {
			if _, ok := col[w]; !ok {
				t.Errorf("--percentiles %q: no column %s in %v", c.pcts, w, rows[0])
			}
		}
		var d struct {
			Runs []struct {
				Summary struct {
					TTFT map[string]any `json:"ttft_ms"`
				} `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(mustRead(t, doc), &d); err != nil {
			t.Fatal(err)
		}
		key := c.want[0][len("ttft_ms_"):]
		got, _ := strconv.ParseFloat(rows[1][col[c.want[0]]], 64)
		if want, ok := d.Runs[0].Summary.TTFT[key].(float64); !ok || got != want || got == 0 {
			t.Errorf("--percentiles %q: %s = %v in the CSV, %v in the JSON", c.pcts, c.want[0], got, d.Runs[0].Summary.TTFT[key])
		}
	}
}
