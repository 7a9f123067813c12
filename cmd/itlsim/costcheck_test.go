package main

import (
	"os"
	"path/filepath"
	"slices"
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

// TestCostCheckLeaveOneOut runs `cost check --leave-one-out` twice: the
// output must be the same; every source and suite must have a held-out
// row; each fit must name the sources it used, never the one it leaves
// out; and --all beside it is refused by name.
func TestCostCheckLeaveOneOut(t *testing.T) {
	if st, err := os.Stat(sharedData); err != nil || !st.IsDir() {
		t.Skipf("public data folder %s is absent; cost check needs it", sharedData)
	}
	r := mustRunCLI(t, "cost", "check", "--data", sharedData, "--leave-one-out")
	again := mustRunCLI(t, "cost", "check", "--data", sharedData, "--leave-one-out")
	if r.stdout != again.stdout {
		t.Errorf("two runs printed different output:\n%s\n---\n%s", r.stdout, again.stdout)
	}
	sources := map[string][]string{
		"blis-h100":  {"kernels/gemm", "kernels/decode", "kernels/prefill"},
		"vidur-a100": {"layers"},
		"sarathi":    {"sarathi"},
		"vllm-0.8.3": {"vllm", "serving"},
	}
	held := map[string]bool{}
	fits := map[string][]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		cells := splitCells(line)
		switch {
		case len(cells) == 7 && sources[cells[0]] != nil:
			if !slices.Contains(sources[cells[0]], cells[1]) {
				t.Errorf("held-out row of %s for suite %s, not one of its suites", cells[0], cells[1])
			}
			held[cells[0]+" "+cells[1]] = true
		case len(cells) > 2 && strings.HasPrefix(cells[0], "without "):
			fits[strings.TrimPrefix(cells[0], "without ")] = strings.Split(cells[1], ", ")
		}
	}
	for src, suites := range sources {
		for _, s := range suites {
			if !held[src+" "+s] {
				t.Errorf("no held-out row for %s %s:\n%s", src, s, r.stdout)
			}
		}
		on, ok := fits[src]
		if !ok {
			t.Errorf("no fit without %s:\n%s", src, r.stdout)
			continue
		}
		if slices.Contains(on, src) || len(on) != len(sources)-1 {
			t.Errorf("the fit without %s was fitted on %v, want the %d other sources", src, on, len(sources)-1)
		}
	}
	if !strings.Contains(r.stdout, "not fitted on") {
		t.Errorf("the output does not say the serving suite is not fitted on:\n%s", r.stdout)
	}

	// docs/fidelity.md shows the held-out table as the command prints it.
	start := strings.Index(r.stdout, "┌")
	end := strings.Index(r.stdout, "└")
	if start < 0 || end < start {
		t.Fatalf("no table in the output:\n%s", r.stdout)
	}
	end += strings.Index(r.stdout[end:], "\n")
	doc, err := os.ReadFile("../../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := r.stdout[start:end]; !strings.Contains(string(doc), table) {
		t.Errorf("docs/fidelity.md does not show the held-out table as the command prints it:\n%s", table)
	}

	bad := execCLI(t, "cost", "check", "--data", sharedData, "--leave-one-out", "--all")
	if bad.code == 0 || !strings.Contains(bad.stderr, "--all") || bad.stdout != "" {
		t.Errorf("--all with --leave-one-out: exit %d, stderr %q, stdout %q; want an error naming --all", bad.code, bad.stderr, bad.stdout)
	}
}
