package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryRequestPathIsBounded: a workload that would create more requests
// than the simulator takes is refused up front, whichever path creates
// them: the generator's --rate over --duration, a rate_curve multiplier
// over the same duration, a ServeGen client's rate_rps. Before the bound,
// the last two ran out of memory instead of failing. A ServeGen client
// run is refused by the memory estimate, which counts its expected
// requests, before it reaches the request bound.
func TestEveryRequestPathIsBounded(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "c-trace.csv")
	dataset := filepath.Join(dir, "c-dataset.json")
	if err := os.WriteFile(trace, []byte("0,1e9,1,Gamma,1,1\n600,0,0,,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dataset, []byte(`{"0": {"input_tokens": "{100: 1}", "output_tokens": "{10: 1}"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--requests", "0", "--duration", "600", "--rate", "1e7"}, "more than 1073741824"},
		{[]string{"run", "--requests", "0", "--duration", "600", "--rate", "10", "--set", "workload.rate_curve=points:0=1e6"}, "more than 1073741824"},
		{[]string{"run", "--workload", trace}, "would need about 2.18 PiB of memory (6e+11 requests"},
		{[]string{"workload", "inspect", trace}, "more than 1073741824"},
		{[]string{"run", "--workload", trace, "--json", dataset}, "is an input of this command"},
	} {
		r := execCLI(t, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}
