package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCalibrateSteps: a linear model fitted to step timings is written as
// a profile that run --profile and a scenario's cost.profile load, and
// that flags still override.
func TestCalibrateSteps(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.yaml")
	r := mustRunCLI(t, "calibrate", "--steps", filepath.Join("testdata", "calibrate", "steps.csv"), "-o", prof)
	for _, want := range []string{"non-negative least squares", "R² 0.99", "MAPE", "measured ms"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The synthetic steps were made with c0 3000, c1 50, c2 120, c3 0.5 µs.
	cfg := mustRunCLI(t, "run", "--profile", prof, "--print-config").stdout
	for _, want := range []string{"model: linear", "c0_us: 30", "c1_us: 50.0", "c2_us: 11", "c3_us: 0.50"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("run --profile: config lacks %q:\n%s", want, cfg)
		}
	}
	over := mustRunCLI(t, "run", "--profile", prof, "--set", "cost.linear.c0_us=7", "--print-config").stdout
	if !strings.Contains(over, "c0_us: 7\n") {
		t.Errorf("--set did not override the profile:\n%s", over)
	}
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("cost:\n  profile: p.yaml\nworkload:\n  requests: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRunCLI(t, "run", scen, "--print-config").stdout; !strings.Contains(out, "model: linear") {
		t.Errorf("a scenario's cost.profile (relative to the scenario) was not loaded:\n%s", out)
	}
	mustRunCLI(t, "run", scen)
}

func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("cost:\n  model: linear\n  linear:\n    c9_us: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := filepath.Join("testdata", "calibrate", "steps.csv")
	checkBadInput(t, []badInputCase{
		{"neither", []string{"calibrate"}, 0, []string{"give either --steps"}},
		{"both", []string{"calibrate", "--steps", steps, filepath.Join("testdata", "analyze", "vllm_small.json")}, 0, []string{"give either --steps"}},
		{"fit model", []string{"calibrate", "--steps", steps, "--fit-model", "cubic"}, 0, []string{"--fit-model: must be linear or roofline"}},
		{"unknown field", []string{"calibrate", filepath.Join("testdata", "analyze", "vllm_small.json"), "--fit", "cost.roofline.nope"}, 0, []string{"unknown field \"cost.roofline.nope\""}},
		{"unknown added field", []string{"calibrate", filepath.Join("testdata", "analyze", "vllm_small.json"), "--fit", "+cost.roofline.nope"}, 0, []string{"unknown field \"cost.roofline.nope\""}},
		{"mixed fit", []string{"calibrate", filepath.Join("testdata", "analyze", "vllm_small.json"), "--fit", "cost.noise_cv,+cost.hiccup_ms"}, 0, []string{"--fit: give either fields", "+fields added to the default set"}},
		{"profile field", []string{"run", "--profile", bad}, 0, []string{"bad.yaml", "c9_us"}},
		{"profile missing", []string{"run", "--profile", filepath.Join(dir, "none.yaml")}, 0, []string{"none.yaml"}},
	})
}

// TestCalibrateMeasured fits the roofline and server overhead to the vLLM
// 70B run at 1 req/s with the simulation in the loop: the errors shrink.
// The front end's serial tokenization, held at the cited value by a flag,
// is written to the profile as given.
func TestCalibrateMeasured(t *testing.T) {
	files := vllm70B(t)
	prof := filepath.Join(t.TempDir(), "p.yaml")
	r := mustRunCLI(t, "calibrate", files[0], "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--evals", "60",
		"--serial-us-per-prompt-token", "10", "-o", prof)
	if !strings.Contains(r.stdout, "loss (mean squared log error)") {
		t.Fatalf("no loss line:\n%s", r.stdout)
	}
	var before, after float64
	line := r.stdout[:strings.Index(r.stdout, "\n")]
	if _, err := fmtSscanLoss(line, &before, &after); err != nil || !(after < before/2) {
		t.Errorf("%s: want the loss at least halved (%v)", line, err)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "request_overhead_ms") || !strings.Contains(string(data), "serial_us_per_prompt_token: 10\n") {
		t.Errorf("profile lacks the server overhead or the held tokenization cost:\n%s", data)
	}
}

// fmtSscanLoss reads "... loss (mean squared log error) A -> B".
func fmtSscanLoss(line string, before, after *float64) (int, error) {
	i := strings.Index(line, "error) ")
	if i < 0 {
		return 0, os.ErrNotExist
	}
	return fmtSscan(line[i+len("error) "):], before, after)
}

func fmtSscan(s string, a, b *float64) (int, error) { return fmt.Sscanf(s, "%g -> %g", a, b) }

// TestLinearCoefficientsNotGivenAreZero: a three-term linear model keeps
// c3 and c4 at 0 instead of the built-in values, and --print-config says so.
func TestLinearCoefficientsNotGivenAreZero(t *testing.T) {
	scen := filepath.Join(t.TempDir(), "lin.yaml")
	if err := os.WriteFile(scen, []byte("cost:\n  model: linear\n  linear:\n    c0_us: 5000\n    c1_us: 20\n    c2_us: 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRunCLI(t, "run", scen, "--print-config").stdout
	for _, want := range []string{"c0_us: 5000", "c3_us: 0\n", "c4_us: 0\n", "coefficients not given are 0 once any is given"} {
		if !strings.Contains(out, want) {
			t.Errorf("print-config lacks %q:\n%s", want, out)
		}
	}
	def := mustRunCLI(t, "run", "--cost-model", "linear", "--print-config").stdout
	if !strings.Contains(def, "c3_us: 0.046") {
		t.Errorf("with no coefficient given the built-in ones apply:\n%s", def)
	}
}

// TestCalibrateStepsSplitwise: a Splitwise perf_model.csv (several setups in
// one file) contributes the rows of the scenario's model, GPU and TP, a
// prompt-phase and a token-phase step each; the synthetic file was made
// with c0 3000, c1 50, c2 120, c3 0.5 µs at a context of prompt_size +
// token_size/2, so the fit recovers them.
func TestCalibrateStepsSplitwise(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "p.yaml")
	file := filepath.Join("testdata", "calibrate", "splitwise.csv")
	r := mustRunCLI(t, "calibrate", "--steps", file, "--model", "llama-2-70b", "--gpu", "a100-80gb", "--tp", "4", "-o", prof)
	for _, want := range []string{"to 18 steps", "c0 3000 µs, c1 50 µs/prefill token, c2 120 µs/decode seq, c3 0.5 µs/context token, c4 0 µs",
		"R² 1.0000", "9 rows of llama-2-70b on 4 × a100-80gb"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	cfg := mustRunCLI(t, "run", "--profile", prof, "--print-config").stdout
	for _, want := range []string{"model: linear", "c0_us: 3000", "c1_us: 50\n", "c3_us: 0.5\n"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("run --profile: config lacks %q:\n%s", want, cfg)
		}
	}
	// Another setup in the file is one row; one with no rows names those it has.
	if r := mustRunCLI(t, "calibrate", "--steps", file, "--model", "llama-2-70b", "--gpu", "h100-sxm-80gb", "--tp", "8"); !strings.Contains(r.stdout, "to 2 steps") {
		t.Errorf("h100 tp 8: %s", r.stdout)
	}
	var out, errb strings.Builder
	if code := Main([]string{"calibrate", "--steps", file, "-o", prof + ".2"}, &out, &errb); code == 0 {
		t.Fatal("a setup without rows was accepted")
	}
	want := "Splitwise profile has no rows for --model llama-3.1-8b --gpu h100-sxm-80gb --tp 1; it has: --model llama-2-70b --gpu a100-80gb --tp 4; --model llama-2-70b --gpu h100-sxm-80gb --tp 8"
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	if _, err := os.Stat(prof + ".2"); err == nil {
		t.Error("a failed calibrate wrote its profile")
	}
}

// The shared Splitwise profile: the roofline fitted to Llama-2-70B on eight
// H100s explains most of its 105 rows.
func TestCalibrateStepsSplitwiseShared(t *testing.T) {
	file := filepath.Join("..", "..", "..", "shared", "data", "profiles", "splitwise_perf_model.csv")
	if _, err := os.Stat(file); err != nil {
		t.Skip("shared data absent:", err)
	}
	r := mustRunCLI(t, "calibrate", "--steps", file, "--fit-model", "roofline", "--model", "llama-2-70b", "--gpu", "h100-sxm-80gb", "--tp", "8")
	var r2 float64
	if _, err := fmt.Sscanf(r.stdout[strings.Index(r.stdout, "R² "):], "R² %f", &r2); err != nil || r2 < 0.95 {
		t.Errorf("R² %v (%v), want ≥ 0.95:\n%s", r2, err, r.stdout)
	}
}

// TestCalibrateLeaveOneOut is the hold-out protocol on the four shared vLLM
// runs: each run is simulated with the fields fitted on the other three,
// so no figure comes from a fit that saw its run. The test runs the
// command of docs/fidelity.md's "Out of sample (leave-one-out)", prints
// the out-of-sample table (-v) and holds every figure within 50 %: far
// from the 10 % / 25 % issue 27 aims at (the doc shows where it misses),
// but a fit that broke or leaked nothing would be caught. It then checks
// that the doc's table gives every cell's error as the command prints it.
func TestCalibrateLeaveOneOut(t *testing.T) {
	files := vllm70B(t)
	r := mustRunCLI(t, append(append([]string{"calibrate"}, files...), "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8",
		"--warm-cache", "--evals", "100", "--leave-one-out")...)
	t.Log("\n" + r.stdout)
	rows := 0
	fits := map[string]bool{}
	// printed maps a held-out run's short name (qps_01) to its errors as
	// printed, "-12.1", in the command's column order.
	printed := map[string][]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 3 || !strings.Contains(cells[1], "serving_tp8") {
			continue
		}
		if !strings.Contains(line, " / ") { // the fitted fields' table
			fit := strings.Join(cells[2:], "|")
			if fits[fit] {
				t.Errorf("two held-out runs got the same fit %s: were they fitted on the same runs?", fit)
			}
			fits[fit] = true
			continue
		}
		rows++
		run := strings.TrimPrefix(strings.TrimSpace(cells[1]), "serving_tp8_pp1_sharegpt_")
		for _, c := range cells[2 : len(cells)-1] {
			var meas, sim, errPct float64
			if _, err := fmt.Sscanf(strings.TrimSpace(c), "%g / %g (%g%%)", &meas, &sim, &errPct); err != nil {
				t.Errorf("%s: cell %q: %v", cells[1], c, err)
				continue
			}
			if errPct < -50 || errPct > 50 {
				t.Errorf("%s: %s out of sample %+.1f %%, want within ±50 %%", strings.TrimSpace(cells[1]), c, errPct)
			}
			c = strings.TrimSpace(c)
			printed[run] = append(printed[run], c[strings.LastIndex(c, "(")+1:len(c)-len("%)")])
		}
	}
	if rows != len(files) || len(fits) != len(files) {
		t.Errorf("%d held-out rows and %d fits, want %d of each:\n%s", rows, len(fits), len(files), r.stdout)
	}
	checkLeaveOneOutDoc(t, "../../docs/fidelity.md", printed)
	if r := execCLI(t, "calibrate", files[0], "--leave-one-out", "-o", filepath.Join(t.TempDir(), "p.yaml")); r.code == 0 {
		t.Error("--leave-one-out with -o: accepted, want an error (it writes no profile)")
	}
}

// leaveOneOutColumns are the column heads of docs/fidelity.md's
// leave-one-out table, in the order calibrate --leave-one-out prints its
// columns (ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, itl_p50_ms, itl_p99_ms,
// stream_p99_itl_p50_ms).
var leaveOneOutColumns = []string{"TTFT p50", "TTFT p99", "TPOT p50", "ITL p50", "ITL p99", "stream p99 ITL p50"}

// checkLeaveOneOutDoc reads the table under "### Out of sample
// (leave-one-out)" in the doc at path (rows "| qps_01 | −12.1 % | … |",
// Unicode minus) and reports every run whose row is missing or extra and
// every cell whose error differs from printed (run → errors as the command
// prints them, "-12.1", in leaveOneOutColumns' order).
func checkLeaveOneOutDoc(t *testing.T, path string, printed map[string][]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	const head = "### Out of sample (leave-one-out)\n"
	start := strings.Index(doc, head)
	if start < 0 {
		t.Fatalf("%s has no section %q", path, strings.TrimSpace(head))
	}
	section := doc[start+len(head):]
	if end := strings.Index(section, "\n### "); end >= 0 {
		section = section[:end]
	}
	inTable := false
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := splitCells(line)
		switch {
		case len(cells) > 0 && cells[0] == "held-out run":
			inTable = true
			if !slices.Equal(cells[1:], leaveOneOutColumns) {
				t.Errorf("%s: the leave-one-out table's columns are %q, want %q (the command's order)", path, cells[1:], leaveOneOutColumns)
			}
			continue
		case !inTable:
			continue
		case len(cells) == 0:
			inTable = false // the table ends at its first line that is not a row
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		run := cells[0]
		want, ok := printed[run]
		if !ok {
			t.Errorf("%s: the leave-one-out table has a row %q, which the command does not print", path, run)
			continue
		}
		documented[run] = true
		if len(cells)-1 != len(want) {
			t.Errorf("%s: row %s has %d cells, the command prints %d", path, run, len(cells)-1, len(want))
			continue
		}
		for i, c := range cells[1:] {
			// The doc writes "−12.1 %" for the command's "-12.1%".
			got := strings.TrimSpace(strings.TrimSuffix(strings.ReplaceAll(c, "−", "-"), "%"))
			if got != want[i] {
				t.Errorf("%s: held-out %s %s is %s in the doc, the command prints %s%%", path, run, leaveOneOutColumns[i], c, want[i])
			}
		}
	}
	for run := range printed {
		if !documented[run] {
			t.Errorf("%s: the leave-one-out table has no row for held-out run %s", path, run)
		}
	}
}

// TestCalibrateFrontEndByDefault: without --fit, calibrate fits the front
// end where the runs separate it from step time and says when they cannot.
// One run at 1 req/s cannot (an isolated request pays its serial work as a
// fixed latency would); the same run with the all-at-once one can for the
// per-token cost (the burst queues for it). A flag holds it.
func TestCalibrateFrontEndByDefault(t *testing.T) {
	files := vllm70B(t)
	args := []string{"--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--evals", "3", "--warm-cache"}
	light := mustRunCLI(t, append([]string{"calibrate", files[0]}, args...)...).stdout
	if !strings.Contains(light, "front end: not separable from step time on this data (server.serial_us_per_prompt_token: ") ||
		strings.Contains(light, "server.serial_us_per_prompt_token │") {
		t.Errorf("qps 1 alone: want the front end held and said so:\n%s", light)
	}
	both := mustRunCLI(t, append([]string{"calibrate", files[0], files[3]}, args...)...).stdout
	if !strings.Contains(both, "front end: fitted beside step time (server.serial_us_per_prompt_token: separable") ||
		!strings.Contains(both, "server.serial_us_per_prompt_token │") {
		t.Errorf("qps 1 and inf: want the per-token cost fitted:\n%s", both)
	}
	held := mustRunCLI(t, append([]string{"calibrate", files[0], files[3], "--serial-us-per-prompt-token", "10"}, args...)...).stdout
	if strings.Contains(held, "server.serial_us_per_prompt_token │") {
		t.Errorf("--serial-us-per-prompt-token given: want it held:\n%s", held)
	}
}
