package calibrate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim/cost"
)

// dataDir is the project's shared data folder seen from this package's
// directory (reports/calibrate): the shared data folder next to the repository.
var dataDir = filepath.Join("..", "..", "..", "shared", "data")

func needData(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(dataDir); err != nil {
		t.Skipf("shared data folder %s absent: %v", dataDir, err)
	}
}

func assertRows(t *testing.T, rows []CheckRow, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	asserted := 0
	for _, r := range rows {
		if !r.Asserted {
			continue
		}
		asserted++
		if !r.Pass {
			t.Errorf("%s %s: predicted %.4f ms, measured %.4f ms, ratio %.3f: %s",
				r.Suite, r.Shape, r.PredictedMS, r.MeasuredMS, r.Ratio, r.Criterion)
		}
	}
	if asserted == 0 {
		t.Fatal("no asserted rows")
	}
	for _, s := range Summarize(rows) {
		t.Logf("%-16s rows %4d asserted %4d failed %d max|ratio-1| asserted %.3f (%s), all %.3f",
			s.Suite, s.Rows, s.Asserted, s.Failed, s.MaxDeviation, s.WorstShape, s.MaxDeviationAll)
	}
}

func TestCheckKernels(t *testing.T) {
	needData(t)
	rows, err := CheckKernels(dataDir, cost.DefaultRoofline())
	assertRows(t, rows, err)
}

func TestCheckVidurMLP(t *testing.T) {
	needData(t)
	rows, err := CheckVidurMLP(dataDir, cost.DefaultRoofline())
	assertRows(t, rows, err)
}

func TestCheckSarathiStepShape(t *testing.T) {
	needData(t)
	rows, err := CheckSarathiStepShape(dataDir, cost.DefaultRoofline())
	assertRows(t, rows, err)
	for _, r := range rows {
		t.Logf("%s: predicted %.1f ms, measured %.1f ms; %s", r.Shape, r.PredictedMS, r.MeasuredMS, r.Criterion)
	}
}

func TestCheckVLLMDecode(t *testing.T) {
	needData(t)
	rows, err := CheckVLLMDecode(dataDir, cost.DefaultRoofline())
	assertRows(t, rows, err)
	for _, r := range rows {
		t.Logf("%s: predicted %.2f ms, measured %.2f ms; %s", r.Shape, r.PredictedMS, r.MeasuredMS, r.Criterion)
	}
}

func TestParseHeads(t *testing.T) {
	tests := []struct {
		file             string
		withTP           bool
		q, kv, d, tp     int
		wantErrSubstring string
	}{
		{"64-8-128-tp4.csv", true, 64, 8, 128, 4, ""},
		{"28-4-128-tp8.csv", true, 28, 4, 128, 8, "tp8 does not split 28 query"},
		{"32-8-128.csv", false, 32, 8, 128, 1, ""},
		{"32-8-128.csv", true, 0, 0, 0, 0, "-tp<N>.csv"},
		{"32-8-tp2.csv", true, 0, 0, 0, 0, "file name is not"},
		{"a-b-c.csv", false, 0, 0, 0, 0, "file name is not"},
	}
	for _, tt := range tests {
		q, kv, d, tp, err := parseHeads(filepath.Join("x", tt.file), tt.withTP)
		if tt.wantErrSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstring) {
				t.Errorf("%s: got %v, want an error containing %q", tt.file, err, tt.wantErrSubstring)
			}
			continue
		}
		if err != nil || q != tt.q || kv != tt.kv || d != tt.d || tp != tt.tp {
			t.Errorf("%s: got %d-%d-%d tp%d, %v", tt.file, q, kv, d, tp, err)
		}
	}
}

func TestCheckErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	gemm := filepath.Join(dir, blisDir, "gemm", "h100")
	if err := os.MkdirAll(gemm, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gemm, "data.csv"), []byte("m,k,latency_us\n8,8,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CheckKernels(dir, cost.DefaultRoofline())
	if err == nil || !strings.Contains(err.Error(), "data.csv: missing column n") {
		t.Errorf("got %v, want a missing-column error naming data.csv", err)
	}
	if _, err := CheckSarathiStepShape(dir, cost.DefaultRoofline()); err == nil {
		t.Error("missing Sarathi table: no error")
	}
}

func TestSummarize(t *testing.T) {
	rows := []CheckRow{
		ratioRow("a", "x", 1.2e6, 1, true, 0.3),
		ratioRow("a", "y", 2e6, 1, true, 0.3),
		ratioRow("a", "z", 5e6, 1, false, 0),
		ratioRow("b", "w", 1e6, 1, true, 0.3),
	}
	got := Summarize(rows)
	if len(got) != 2 || got[0].Suite != "a" || got[0].Rows != 3 || got[0].Asserted != 2 || got[0].Failed != 1 ||
		got[0].WorstShape != "y" || math.Abs(got[0].MaxDeviation-1) > 1e-12 || math.Abs(got[0].MaxDeviationAll-4) > 1e-12 {
		t.Errorf("got %+v", got)
	}
}

// The serving check simulates vLLM's 1 req/s run of Llama-3.3-70B and
// holds its median ITL within ServingTolerance of the measured one.
func TestCheckServing(t *testing.T) {
	needData(t)
	r, err := CheckServing(dataDir)
	assertRows(t, []CheckRow{r}, err)
	if r.Suite != "serving" || !strings.Contains(r.Shape, "200 ShareGPT requests") || !(r.MeasuredMS > 0) {
		t.Errorf("row %+v: want the serving suite's 200 requests against a measured ITL", r)
	}
	if _, err := CheckServing(t.TempDir()); err == nil || !strings.Contains(err.Error(), servingFile) {
		t.Errorf("an empty folder: %v, want an error naming %s", err, servingFile)
	}
}
