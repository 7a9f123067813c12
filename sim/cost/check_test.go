package cost

import (
	"os"
	"path/filepath"
	"testing"
)

// dataDir is the project's shared data folder seen from this package's
// directory (sim/cost): /work/shared/data next to the repository.
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
	rows, err := CheckKernels(dataDir, DefaultRoofline())
	assertRows(t, rows, err)
}

func TestCheckVidurMLP(t *testing.T) {
	needData(t)
	rows, err := CheckVidurMLP(dataDir, DefaultRoofline())
	assertRows(t, rows, err)
}

func TestCheckSarathiStepShape(t *testing.T) {
	needData(t)
	rows, err := CheckSarathiStepShape(dataDir, DefaultRoofline())
	assertRows(t, rows, err)
	for _, r := range rows {
		t.Logf("%s: predicted %.1f ms, measured %.1f ms; %s", r.Shape, r.PredictedMS, r.MeasuredMS, r.Criterion)
	}
}

func TestCheckVLLMDecode(t *testing.T) {
	needData(t)
	rows, err := CheckVLLMDecode(dataDir, DefaultRoofline())
	assertRows(t, rows, err)
	for _, r := range rows {
		t.Logf("%s: predicted %.2f ms, measured %.2f ms; %s", r.Shape, r.PredictedMS, r.MeasuredMS, r.Criterion)
	}
}
