package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trace with malformed rows stops the run naming the first one, unless
// --skip-bad-rows asks to pass over them, and then the count is reported.
func TestSkipBadRows(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	rows := "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,100,20\n0.5,abc,20\n1.0,120,30\n1.5,130,-4\n2.0,90,10\n"
	if err := os.WriteFile(trace, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--workload", trace, "--workload-format", "vidur"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "t.csv:3") {
		t.Fatalf("bad rows without --skip-bad-rows: exit %d, stderr %q; want an error naming t.csv:3", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"run", "--workload", trace, "--workload-format", "vidur", "--skip-bad-rows", "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "skipped 2 malformed row(s)") {
		t.Errorf("stderr %q does not report the skipped rows", errb.String())
	}
	var doc struct {
		Runs []struct {
			Summary struct {
				Requests    int `json:"requests"`
				SkippedRows int `json:"skipped_rows"`
			} `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Runs[0].Summary; s.Requests != 3 || s.SkippedRows != 2 {
		t.Errorf("requests %d, skipped %d; want 3 and 2", s.Requests, s.SkippedRows)
	}
}
