package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type utilJSON struct {
	MFU       *float64 `json:"mfu"`
	MBU       *float64 `json:"mbu"`
	BusyShare *float64 `json:"busy_share"`
}

type utilRuns struct {
	Runs []struct {
		Name    string `json:"name"`
		Summary struct {
			Utilization *utilJSON `json:"utilization"`
		} `json:"summary"`
		Replicas []struct {
			Utilization *utilJSON `json:"utilization"`
		} `json:"replicas"`
	} `json:"runs"`
}

func readUtil(t *testing.T, path string) utilRuns {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v utilRuns
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// summary.utilization and runs[].replicas[].utilization reach the JSON:
// MFU rises with the rate, every share is in [0, 1], the linear model's
// MFU and MBU are counted from the model spec, and the table carries the row.
func TestCLIUtilization(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "u.json")
	r := mustRunCLI(t, "run", "--requests", "300", "--rate", "1,8", "--replicas", "2", "--json", js)
	if !strings.Contains(r.stdout, "GPU use: MFU / MBU / busy") {
		t.Errorf("table lacks the utilisation row:\n%s", r.stdout)
	}
	v := readUtil(t, js)
	if len(v.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(v.Runs))
	}
	var mfu []float64
	for _, run := range v.Runs {
		us := []*utilJSON{run.Summary.Utilization}
		for _, rep := range run.Replicas {
			us = append(us, rep.Utilization)
		}
		if len(us) != 3 {
			t.Fatalf("run %s: %d replicas with utilization, want 2", run.Name, len(us)-1)
		}
		for i, u := range us {
			if u == nil || u.MFU == nil || u.MBU == nil || u.BusyShare == nil {
				t.Fatalf("run %s: utilization %d incomplete: %+v", run.Name, i, u)
			}
			for _, x := range []float64{*u.MFU, *u.MBU, *u.BusyShare} {
				if !(x > 0 && x <= 1) {
					t.Errorf("run %s: utilization %d: %g outside (0, 1]", run.Name, i, x)
				}
			}
		}
		mfu = append(mfu, *run.Summary.Utilization.MFU)
	}
	if !(mfu[1] > mfu[0]) {
		t.Errorf("MFU %.4f at 8 req/s not above %.4f at 1 req/s", mfu[1], mfu[0])
	}

	lin := filepath.Join(dir, "lin.json")
	r = mustRunCLI(t, "run", "--requests", "100", "--cost-model", "linear", "--json", lin)
	if strings.Contains(r.stdout, "n/a / n/a /") {
		t.Errorf("linear model's table row is n/a, want counted from the model spec:\n%s", r.stdout)
	}
	u := readUtil(t, lin).Runs[0].Summary.Utilization
	if u == nil || u.MFU == nil || u.MBU == nil || u.BusyShare == nil || !(*u.MFU > 0 && *u.MFU <= 1) || !(*u.MBU > 0 && *u.MBU <= 1) || !(*u.BusyShare > 0) {
		t.Errorf("linear model's utilization: %+v, want mfu, mbu and busy_share in (0, 1]", u)
	}
}

// A linear fit faster than the GPU's peak counts more bytes than the
// bandwidth moves: MBU is given as 1, and the JSON, the table and a
// warning say it was capped and what was counted; a roofline run says
// nothing of the kind.
func TestCLIUtilizationSaysWhenCapped(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "u.json")
	r := mustRunCLI(t, "run", "--requests", "100", "--cost-model", "linear", "--set", "cost.linear.c0_us=500", "--json", js)
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Summary struct {
				Utilization map[string]any `json:"utilization"`
			} `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	u := doc.Runs[0].Summary.Utilization
	raw, _ := u["mbu_uncapped"].(float64)
	if u["mbu"] != 1.0 || u["mbu_capped"] != true || !(raw > 1) {
		t.Errorf("c0 = 500 µs (16 GB of weights a step): utilization %v; want mbu 1, mbu_capped true, mbu_uncapped > 1", u)
	}
	if _, ok := u["mfu_capped"]; ok {
		t.Errorf("MFU below 1 is marked capped: %v", u)
	}
	if !strings.Contains(r.stdout, "(capped; counted ") || !strings.Contains(r.stdout, "warning: run chunked: MBU counted ") {
		t.Errorf("the table does not say MBU was capped:\n%s", r.stdout)
	}
	r = mustRunCLI(t, "run", "--requests", "100", "--format", "json")
	if strings.Contains(r.stdout, "_capped") || strings.Contains(r.stdout, "(capped") {
		t.Error("a roofline run is marked capped")
	}
}
