package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputNeverReplacesAnInput: in every command, an output flag that
// names one of the command's own input files — by the same path, another
// spelling of it, a symbolic link or a hard link — is refused before
// anything is written, and the input is left as it was.
func TestOutputNeverReplacesAnInput(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(name, from string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, mustRead(t, from), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	measured := copyTo("m.json", "testdata/analyze/vllm_small.json")
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("workload:\n  requests: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(dir, "a.json")
	mustRunCLI(t, "run", scen, "--json", result)
	trace := filepath.Join(dir, "t.csv")
	mustRunCLI(t, "workload", "generate", scen, "-o", trace)
	link := filepath.Join(dir, "link.json")
	hard := filepath.Join(dir, "hard.json")
	if err := os.Symlink("m.json", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Link(measured, hard); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	other := filepath.Join(dir, "sub", "..", "m.json")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	before := map[string][]byte{}
	for _, p := range []string{measured, scen, result, trace} {
		before[p] = mustRead(t, p)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"analyze", measured, "--json", measured}, "--json"},
		{[]string{"analyze", measured, "--html", link}, "--html"},
		{[]string{"analyze", measured, "--streams", hard}, "--streams"},
		{[]string{"analyze", link, "--json", other}, "--json"},
		{[]string{"report", result, "-o", result}, "-o"},
		{[]string{"run", scen, "--json", scen}, "--json"},
		{[]string{"run", "--workload", trace, "--streams", trace}, "--streams"},
		{[]string{"run", scen, "--set", "workload.trace=" + trace, "--timelines", trace}, "--timelines"},
		{[]string{"gate", "--baseline", measured, "--candidate", measured, "--html", measured}, "--html"},
		{[]string{"gate", "--baseline", result, "--candidate", measured, "--json", hard}, "--json"},
		{[]string{"workload", "generate", trace, "-o", trace}, "-o"},
		{[]string{"workload", "generate", scen, "--set", "workload.trace=" + trace, "-o", trace}, "-o"},
		{[]string{"replay", measured, "--json", link}, "--json"},
	} {
		r := execCLI(t, c.args...)
		name := strings.Join(c.args, " ")
		if r.code == 0 {
			t.Errorf("%s: exit 0, want a refusal", name)
			continue
		}
		if !strings.Contains(r.stderr, c.flag) || !strings.Contains(r.stderr, "is an input") {
			t.Errorf("%s: stderr %q does not say that %s names an input", name, r.stderr, c.flag)
		}
		for p, want := range before {
			if got := mustRead(t, p); !bytes.Equal(got, want) {
				t.Fatalf("%s: %s changed", name, p)
			}
		}
	}
	// A run that reads the trace and writes elsewhere is still fine.
	mustRunCLI(t, "run", "--workload", trace, "--streams", filepath.Join(dir, "out.csv"))
}
