package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Through the CLI: a batch-1 Llama-2-7B decode under CUDA graphs
// (--enforce-eager=false) saves the launch part of every kernel floor, 32
// layers × (4 GEMMs + 5 elementwise kernels + 1 attention call) ×
// (kernel_overhead_us 4 − graph_kernel_overhead_us 1) = 0.96 ms a step; the
// scenario keys do the same as the flags.
func TestRunCUDAGraphsThroughFlagsAndYAML(t *testing.T) {
	args := []string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--requests", "4", "--rate", "0.1",
		"--input-len", "fixed:512", "--output-len", "fixed:64", "--serial-us-per-prompt-token", "0"}
	tpot := func(extra ...string) float64 {
		return runSummary(t, append(append([]string{}, args...), extra...)...)["tpot_ms"].(map[string]any)["p50"].(float64)
	}
	eager, graphs := tpot("--enforce-eager"), tpot("--enforce-eager=false")
	if d := eager - graphs; d < 0.9 || d > 1.0 {
		t.Errorf("TPOT p50 eager %.3f ms, graphs %.3f ms: saves %.3f ms, want about 0.96", eager, graphs, d)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "graphs.yaml")
	if err := os.WriteFile(path, []byte("cost:\n  enforce_eager: false\n  cudagraph_capture_sizes: [1, 2, 4, 8]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tpot(path); got != graphs {
		t.Errorf("scenario keys: TPOT p50 %.3f ms, the flag %.3f", got, graphs)
	}
	if got := tpot("--enforce-eager=false", "--cudagraph-capture-sizes", "1,2,4,8"); got != graphs {
		t.Errorf("--cudagraph-capture-sizes 1,2,4,8: TPOT p50 %.3f ms, want %.3f", got, graphs)
	}
}

func TestRunCUDAGraphsBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--cudagraph-capture-sizes", "1,two"}, `cost.cudagraph_capture_sizes: capture size "two"`},
		{[]string{"--cudagraph-capture-sizes", "0"}, `capture size "0": expected a whole number of tokens in [1,65536]`},
		{[]string{"--set", "cost.roofline.graph_kernel_overhead_us=-1"}, "roofline.graph_kernel_overhead_us: must be in [0,"},
	} {
		r := execCLI(t, append([]string{"run", "--requests", "2"}, tt.args...)...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line containing %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}
