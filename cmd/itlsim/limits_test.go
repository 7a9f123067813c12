package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Values inside their documented ranges that price steps at centuries stop
// with an error naming the cost model, never a panic.
func TestCostModelPastTheHorizonIsAnError(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--requests", "20", "--set", "cost.roofline.compute_efficiency=1e-12"},
		{"run", "--requests", "20", "--set", "cost.roofline.memory_efficiency=1e-12"},
		{"run", "--requests", "20", "--cost-model", "linear", "--input-len", "fixed:100000",
			"--set", "cost.linear.c1_us=1e6", "--set", "cost.linear.c4_us=1e6"},
	} {
		r := execCLI(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "cost model prices a step") || strings.Contains(r.stderr, "panic") {
			t.Errorf("itlsim %s: exit %d, stderr %q; want exit 1 naming the cost model", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// Scenarios that would not fit in memory are refused before they
// allocate, with what they would need; --max-memory raises the cap.
func TestMemoryEstimateRefusesUpFront(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--num-gpu-blocks", "2000000000"},
		{"run", "--rate", "1.7e7", "--duration", "60"},
		{"sweep", "--rate", "1", "--requests", "3000000"},
		{"run", "--requests", "1000", "--max-memory", "1MiB"},
	} {
		r := execCLI(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "would need about") || !strings.Contains(r.stderr, "--max-memory") {
			t.Errorf("itlsim %s: exit %d, stderr %q; want the memory it would need", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	mustRunCLI(t, "run", "--requests", "50", "--max-memory", "1GiB")
	r := execCLI(t, "run", "--max-memory", "lots")
	if r.code == 0 || !strings.Contains(r.stderr, "expected a size") {
		t.Errorf("--max-memory lots: exit %d, stderr %q", r.code, r.stderr)
	}
}

// When no rate holds, capacity says so with n/a (JSON null) instead of an
// error from probing rates too low to simulate, or a 0.
func TestCapacityNothingHoldsIsNA(t *testing.T) {
	r := mustRunCLI(t, "capacity", "--requests", "100", "--seeds", "1", "--slo", "ttft:p99<=1ms")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	row := lines[len(lines)-2]
	if !strings.Contains(row, "chunked") || strings.Count(row, "n/a") < 7 || strings.Contains(row, " 0 ") {
		t.Errorf("nothing holds: row %q, want n/a for the rates and figures", row)
	}
	j := mustRunCLI(t, "capacity", "--requests", "100", "--seeds", "1", "--slo", "ttft:p99<=1ms", "--format", "json")
	if !strings.Contains(j.stdout, `"max_rate": null`) {
		t.Errorf("nothing holds: JSON lacks max_rate null: %.300s", j.stdout)
	}
}

// vllmFile writes a vLLM bench result of 20 identical requests.
func vllmFile(t *testing.T, rate, duration float64) string {
	t.Helper()
	n := 20
	rep := func(s string) string { return "[" + strings.TrimSuffix(strings.Repeat(s+",", n), ",") + "]" }
	itls := "[" + strings.TrimSuffix(strings.Repeat("0.02,", 19), ",") + "]"
	body := fmt.Sprintf(`{"backend":"vllm","request_rate":%g,"duration":%g,"completed":%d,"input_lens":%s,"output_lens":%s,"ttfts":%s,"itls":%s,"generated_texts":%s,"errors":%s}`,
		rate, duration, n, rep("100"), rep("20"), rep("0.05"), rep(itls), rep(`""`), rep(`""`))
	return writeScenario(t, "v.json", body)
}

// validate never prints a figure it could not judge: a rate whose arrivals
// outlast the clock is an error (not a TTFT of -9e12 ms), a duration of 0
// gives n/a req/s, and an all-rejected simulation n/a instead of 0 (-100 %).
func TestValidateNeverPrintsUnjudgedFigures(t *testing.T) {
	r := execCLI(t, "validate", vllmFile(t, 1e-12, 10))
	if r.code != 1 || !strings.Contains(r.stderr, "request_rate 1e-12") || strings.Contains(r.stdout, "-9223372036") {
		t.Errorf("request_rate 1e-12: exit %d, stderr %q, stdout %.200q", r.code, r.stderr, r.stdout)
	}
	out := mustRunCLI(t, "validate", vllmFile(t, 4, 0)).stdout
	if !rowHas(out, "requests_per_s", "│ n/a ") {
		t.Errorf("duration 0: requests_per_s not n/a:\n%s", out)
	}
	out = mustRunCLI(t, "validate", vllmFile(t, 4, 10), "--num-gpu-blocks", "1").stdout
	if !rowHas(out, "ttft_p50_ms", "n/a") || strings.Contains(out, "-100.0%") {
		t.Errorf("all rejected: simulated figures not n/a:\n%s", out)
	}
}

// rowHas reports whether the table row of metric holds s.
func rowHas(table, metric, s string) bool {
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, "│ "+metric+" ") && strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// failingWriter is a stdout whose every write fails, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A failed write to stdout fails the command in every form (table,
// markdown, JSON): exit 1, gate's 2, never 0 with the answer lost.
func TestStdoutWriteErrorsFail(t *testing.T) {
	v := vllmFile(t, 4, 10)
	shards := t.TempDir()
	mustRunCLI(t, "sweep", "--rate", "1", "--requests", "20", "--out", shards)
	cases := [][]string{
		{"run", "--requests", "20"},
		{"analyze", v},
		{"gate", "--candidate", v, "--slo", "ttft:p99<=1s"},
		// A gate with a verdict of its own (inconclusive: 4 streams a
		// side) still exits 2 when its table is lost.
		{"gate", "--baseline", v, "--candidate", v},
		// and a failed one.
		{"gate", "--candidate", v, "--slo", "ttft:p99<=1us"},
		{"sweep", "--rate", "1", "--requests", "20"},
		{"merge", shards},
		{"validate", v},
		{"presets"},
	}
	for _, c := range cases {
		for _, format := range []string{"", "markdown", "json"} {
			args := slices.Clone(c)
			if format != "" {
				if c[0] == "presets" {
					continue
				}
				args = append(args, "--format", format)
			}
			var stderr bytes.Buffer
			code := Main(args, failingWriter{}, &stderr)
			want := 1
			if c[0] == "gate" {
				want = 2
			}
			if code != want || !strings.Contains(stderr.String(), "stdout:") {
				t.Errorf("itlsim %s > full disk: exit %d, stderr %q; want %d and the write error", strings.Join(args, " "), code, stderr.String(), want)
			}
		}
	}
}

// A pod index outside its Indexed Job is a clear error, not a shard.
func TestJobCompletionIndexOutOfRange(t *testing.T) {
	for _, v := range []string{"-1", "2", "x", ""} {
		t.Run(v, func(t *testing.T) {
			t.Setenv("JOB_COMPLETION_INDEX", v)
			r := execCLI(t, "sweep", "--rate", "1,2", "--requests", "20", "--shard-count", "2", "--out", t.TempDir())
			if r.code != 1 || !strings.Contains(r.stderr, "JOB_COMPLETION_INDEX=") || !strings.Contains(r.stderr, "0 to 1") {
				t.Errorf("JOB_COMPLETION_INDEX=%q: exit %d, stderr %q", v, r.code, r.stderr)
			}
		})
	}
}
