package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedData is the public measurements folder, /work/shared/data in the
// project's layout, seen from this package's folder.
const sharedData = "../../../shared/data"

func TestCostCheck(t *testing.T) {
	abs, err := filepath.Abs(sharedData)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(sharedData); err != nil || !st.IsDir() {
		t.Skipf("public data folder %s is absent; cost check needs it", abs)
	}
	t.Logf("data: %s", abs)
	r := mustRunCLI(t, "cost", "check", "--data", sharedData)
	rows := tableRows(r.stdout)
	for _, suite := range []string{"kernels/gemm", "kernels/decode", "kernels/prefill", "layers", "sarathi", "vllm", "serving"} {
		if !hasRowPrefix(rows, suite) {
			t.Errorf("cost check does not print suite %q:\n%s", suite, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "FAIL") {
		t.Errorf("an asserted comparison failed:\n%s", r.stdout)
	}

	all := mustRunCLI(t, "cost", "check", "--data", sharedData, "--all")
	if len(all.stdout) <= len(r.stdout) {
		t.Errorf("--all printed %d bytes, want more than the %d of the summary", len(all.stdout), len(r.stdout))
	}
}

func TestCostCheckMissingData(t *testing.T) {
	for _, dir := range []string{"/nonexistent", filepath.Join(t.TempDir(), "absent")} {
		r := execCLI(t, "cost", "check", "--data", dir)
		if r.code == 0 {
			t.Errorf("--data %s: exit 0, want an error", dir)
		}
		if !strings.Contains(r.stderr, dir) || !strings.Contains(r.stderr, "not a folder") {
			t.Errorf("--data %s: stderr %q does not name the folder and say it is not one", dir, r.stderr)
		}
		if r.stdout != "" {
			t.Errorf("--data %s: stdout not empty: %q", dir, r.stdout)
		}
	}
}

func TestCostCheckEmptyData(t *testing.T) {
	dir := t.TempDir()
	r := execCLI(t, "cost", "check", "--data", dir)
	if r.code == 0 {
		t.Fatalf("--data of an empty folder: exit 0, want an error")
	}
	if !strings.Contains(r.stderr, dir) {
		t.Errorf("stderr %q does not name the missing file under %s", r.stderr, dir)
	}
	for _, bad := range []string{"goroutine", "panic"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr holds %q: %s", bad, r.stderr)
		}
	}
}
