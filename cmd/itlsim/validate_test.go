package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badInputCase is one invocation that must fail cleanly: a non-zero exit
// (code, when set), stderr holding every want and nothing of Go's
// internals, and nothing on stdout.
type badInputCase struct {
	name string
	args []string
	code int
	want []string
}

func checkBadInput(t *testing.T, cases []badInputCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := execCLI(t, c.args...)
			if r.code == 0 || (c.code != 0 && r.code != c.code) {
				t.Fatalf("itlsim %s: exit %d, want an error (%d)\nstdout: %.500s", strings.Join(c.args, " "), r.code, c.code, r.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			for _, leak := range []string{"panic", "goroutine", "strconv.", "cannot unmarshal", "Go struct", "!!str", "float64", "[]reports.", "[]workloads."} {
				if strings.Contains(r.stderr, leak) {
					t.Errorf("stderr leaks %q:\n%s", leak, r.stderr)
				}
			}
			if !strings.HasPrefix(r.stderr, "itlsim: ") || strings.Count(r.stderr, "\n") > 3 {
				t.Errorf("stderr is not one itlsim: message:\n%.1000s", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty:\n%.500s", r.stdout)
			}
		})
	}
}

// TestRunComparedTwice: a field compared twice, or set and compared, is an
// error naming both: before, the later values replaced the earlier under
// the earlier one's labels (seed=1/seed=3 ran seed 3).
func TestRunComparedTwice(t *testing.T) {
	scen := writeScenario(t, "cmp.yaml", "workload:\n  requests: 10\ncompare:\n  - seed=1,2\n")
	checkBadInput(t, []badInputCase{
		{"vary twice", []string{"run", "--requests", "10", "--vary", "seed=1,2", "--vary", "seed=3,4"},
			0, []string{"--vary seed=3,4: seed is already compared (by --vary seed=1,2)"}},
		{"list flag and vary", []string{"run", "--requests", "10", "--vary", "seed=1,2", "--seed", "5,6"},
			0, []string{"--vary seed=1,2: seed is already compared (by --seed 5,6)"}},
		{"flag and set", []string{"run", "--requests", "10", "--seed", "5", "--set", "seed=6"},
			0, []string{"--set seed=6: seed is already set (by --seed 5)"}},
		{"file compare and vary", []string{"run", scen, "--vary", "seed=3,4"},
			0, []string{"--vary seed=3,4: seed is already compared (by " + scen + ": compare: seed=1,2)"}},
		{"file compare and list flag", []string{"run", scen, "--seed", "7,8"},
			0, []string{"--seed 7,8: seed is already compared (by " + scen + ": compare: seed=1,2)"}},
	})
	// Different fields still combine, and the labels say what ran.
	r := mustRunCLI(t, "run", "--requests", "10", "--vary", "seed=1,2", "--tp", "1", "--print-config")
	if !strings.Contains(r.stdout, "# run seed=1:") || !strings.Contains(r.stdout, "\nseed: 2\n") {
		t.Errorf("seed comparison:\n%s", r.stdout)
	}
	// A single value under a comparison of its field is replaced in every
	// run, as the labels show (the README's closed-loop example does this).
	r = mustRunCLI(t, "run", "--requests", "10", "--set", "seed=5", "--vary", "seed=1,2", "--print-config")
	if !strings.Contains(r.stdout, "# run seed=1:") || strings.Contains(r.stdout, "seed: 5") {
		t.Errorf("value under a comparison:\n%s", r.stdout)
	}
	// A file's own value of a field it compares is the base, not a clash.
	mustRunCLI(t, "run", writeScenario(t, "own.yaml", "seed: 9\nworkload:\n  requests: 10\ncompare:\n  - seed=1,2\n"), "--print-config")
}

// TestRunTooManyRuns: the comparisons' product is capped before any run is
// built, instead of exhausting memory.
func TestRunTooManyRuns(t *testing.T) {
	ten := "=1,2,3,4,5,6,7,8,9,10"
	var args []string
	for _, p := range []string{"seed", "scheduler.max_num_seqs", "workload.rate", "workload.input_len", "kvcache.num_gpu_blocks"} {
		v := p + ten
		if p == "workload.input_len" {
			v = p + "=fixed:1;fixed:2;fixed:3;fixed:4;fixed:5;fixed:6;fixed:7;fixed:8;fixed:9;fixed:10"
		}
		args = append(args, "--vary", v)
	}
	checkBadInput(t, []badInputCase{
		{"five varies", append([]string{"run"}, args...), 0, []string{"make 100000 runs (10 × 10 × 10 × 10 × 10); the limit is 1000"}},
		{"list flags count too", []string{"run", "--seed", "1,2,3,4,5,6,7,8,9,10,11", "--tp", "1,2,3,4,5,6,7,8,9,10", "--rate", "1,2,3,4,5,6,7,8,9,10"},
			0, []string{"make 1100 runs (10 × 11 × 10); the limit is 1000"}},
	})
}

// TestFlagValueErrors: a mistyped value of a typed flag says what the flag
// expects, not the parser's Go message; gate keeps its bad-input status 2.
func TestFlagValueErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	writeStreams(t, a, 20, 1, 0)
	replay := filepath.Join("testdata", "replay", "small.jsonl")
	checkBadInput(t, []badInputCase{
		{"replay seed", []string{"replay", replay, "--seed", "-1"}, 1, []string{"--seed: expected a whole number ≥ 0, got -1"}},
		{"gate seed", []string{"gate", "--baseline", a, "--candidate", a, "--seed", "-1"}, 2, []string{"--seed: expected a whole number ≥ 0, got -1"}},
		{"gate confidence", []string{"gate", "--baseline", a, "--candidate", a, "--confidence", "high"}, 2, []string{"--confidence: expected a number, got high"}},
		{"gate block", []string{"gate", "--baseline", a, "--candidate", a, "--block", "1.5"}, 2, []string{"--block: expected a whole number, got 1.5"}},
		{"replay pauses", []string{"replay", replay, "--pauses", "x"}, 1, []string{"--pauses: expected a whole number, got x"}},
		{"analyze threshold", []string{"analyze", replay, "--stall-threshold", "soon"}, 1, []string{"--stall-threshold: expected milliseconds (250) or a duration with a unit (250ms, 2s), got soon"}},
		{"run bool", []string{"run", "--print-config=maybe"}, 1, []string{"--print-config: expected true or false, got maybe"}},
	})
}

// TestScenarioValueErrors: a mistyped value in a file names the file, line
// and field path; a file that is not a scenario says so in one line.
func TestScenarioValueErrors(t *testing.T) {
	loss := writeScenario(t, "loss.yaml", "workload:\n  requests: 10\ndelivery:\n  network:\n    profile: broadband\n    loss: \"0.1\"\n")
	octal := writeScenario(t, "octal.yaml", "seed: 010\n")
	trace := writeScenario(t, "some-trace.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+strings.Repeat("2023-11-16 18:15:46.6805900,374,44\n", 5000))
	vllm := filepath.Join("testdata", "analyze", "vllm_small.json")
	checkBadInput(t, []badInputCase{
		{"quoted number", []string{"run", loss}, 1, []string{"loss.yaml:6: delivery.network.loss: expected a number, got the string \"0.1\""}},
		{"octal-looking number", []string{"run", octal}, 1, []string{"octal.yaml:1: seed:", "leading 0"}},
		{"a trace as the scenario", []string{"run", trace}, 1, []string{"some-trace.csv:1: not a scenario file", "to run a trace use --workload FILE"}},
		{"a result as the scenario", []string{"run", vllm}, 1, []string{"vllm_small.json: not a scenario file", "itlsim analyze"}},
		{"set a list from a word", []string{"run", "--set", "workload.classes=chat"}, 1, []string{"--set: workload.classes: expected a YAML list, e.g. [{preset: chat"}},
		{"set a list with a typo", []string{"run", "--set", "workload.classes=[{preset: chat, shar: 1}]"}, 1, []string{`workload.classes: unknown field "shar"`}},
	})
	// Underscores group digits in integer and float fields alike.
	r := mustRunCLI(t, "run", writeScenario(t, "u.yaml", "seed: 1_000\nworkload:\n  rate: 1_000\n  requests: 10\n"), "--print-config")
	if !strings.Contains(r.stdout, "\nseed: 1000\n") || !strings.Contains(r.stdout, "  rate: 1000\n") {
		t.Errorf("underscored numbers:\n%s", r.stdout)
	}
}

// TestRunSetList: --set takes a list in YAML flow form, and the run equals
// the one from a file holding the same list.
func TestRunSetList(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, "classes.yaml", "workload:\n  requests: 40\n  classes:\n    - {preset: chat, share: 0.7}\n    - {preset: code, share: 0.3}\n")
	fromFile := mustRunCLI(t, "run", file, "--json", filepath.Join(dir, "a.json"))
	fromSet := mustRunCLI(t, "run", "--requests", "40", "--set", "workload.classes=[{preset: chat, share: 0.7}, {preset: code, share: 0.3}]", "--json", filepath.Join(dir, "b.json"))
	if fromFile.stdout != fromSet.stdout {
		t.Errorf("--set classes differs from the file:\n%s\nvs\n%s", fromSet.stdout, fromFile.stdout)
	}
	if !strings.Contains(fromSet.stdout, "chat") || !strings.Contains(fromSet.stdout, "code") {
		t.Errorf("no per-class rows:\n%s", fromSet.stdout)
	}
}

// TestResultFileErrors: a malformed --json result is named by file,
// position and JSON path, for report and gate alike.
func TestResultFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"scenario\": {},\n \"runs\": [{\"name\": \"x\", \"streams\": {\"a\": 1}}]}\n"), 0o644)
	want := "bad.json: not an itlsim --json result: line 2, column 37: runs.streams: expected a list, got JSON object"
	checkBadInput(t, []badInputCase{
		{"report", []string{"report", bad, "-o", filepath.Join(dir, "r.html")}, 1, []string{want}},
		{"gate", []string{"gate", "--baseline", bad, "--candidate", bad}, 2, []string{want}},
	})
}

// TestEmpiricalMissingColumn: the message quotes a cut of the header, not
// the whole line (a one-line 50 MB file gave 50 MB of message).
func TestEmpiricalMissingColumn(t *testing.T) {
	var cols []string
	for i := range 50_000 {
		cols = append(cols, "column_"+strings.Repeat("z", i%5))
	}
	wide := writeScenario(t, "wide.csv", strings.Join(cols, ",")+"\n")
	r := execCLI(t, "run", "--requests", "5", "--input-len", "empirical:"+wide+":x")
	if r.code == 0 || !strings.Contains(r.stderr, "missing column x (the header is \"column_,column_z,") || !strings.Contains(r.stderr, "\"…)") {
		t.Errorf("exit %d, stderr %.400q", r.code, r.stderr)
	}
	if len(r.stderr) > 600 {
		t.Errorf("stderr is %d bytes", len(r.stderr))
	}
}

// TestRangeErrors: a gate block longer than half the streams, a target rate
// the clock cannot hold, and a measured file of no requests are errors, not
// a zero-width interval, a clamped duration or a table of zeros.
func TestRangeErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	writeStreams(t, a, 40, 1, 0)
	trace := filepath.Join(dir, "t.csv")
	os.WriteFile(trace, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,5,1\n2023-11-16 18:15:47,5,1\n2023-11-16 18:15:49,5,1\n"), 0o644)
	empty := filepath.Join(dir, "vllm0.json")
	os.WriteFile(empty, []byte(`{"duration": 2.0, "completed": 0, "input_lens": [], "output_lens": [], "ttfts": [], "itls": [], "errors": []}`), 0o644)
	checkBadInput(t, []badInputCase{
		{"gate block", []string{"gate", "--baseline", a, "--candidate", a, "--block", "100000000"}, 2,
			[]string{"block: 100000000 streams is more than half of the 40 streams", "give at most 20"}},
		{"tiny target rate", []string{"workload", "inspect", trace, "--target-rate", "1e-300"}, 1, []string{"workload.target_rate", "beyond the simulator's clock"}},
		{"huge target rate", []string{"workload", "inspect", trace, "--target-rate", "1e308"}, 1, []string{"workload.target_rate: must be a rate in [0, 1e+09]"}},
		{"analyze no requests", []string{"analyze", empty}, 1, []string{"vllm0.json: no requests"}},
	})
	if r := execCLI(t, "gate", "--baseline", a, "--candidate", a, "--block", "20"); r.code != 0 {
		t.Errorf("block 20 of 40: exit %d: %s", r.code, r.stderr)
	}
}

// TestEmptyFlagValues: an empty value is an error for every run flag and
// --set (numbers always refused one; --network "" used to pass as "no
// profile"), with how to turn the stage off; replay's lists too (it
// panicked).
func TestEmptyFlagValues(t *testing.T) {
	replay := filepath.Join("testdata", "replay", "small.jsonl")
	checkBadInput(t, []badInputCase{
		{"network", []string{"run", "--network", ""}, 1, []string{`--network: delivery.network.profile: expected a value, got "" (none: no network profile)`}},
		{"coalescing", []string{"run", "--coalescing", ""}, 1, []string{`--coalescing: delivery.coalescing.preset: expected a value, got "" (none: no coalescing)`}},
		{"frame-ms", []string{"run", "--frame-ms", ""}, 1, []string{`--frame-ms: delivery.render.frame_ms: expected a value, got "" (0: off)`}},
		{"set", []string{"run", "--set", "delivery.network.profile="}, 1, []string{`--set delivery.network.profile=: delivery.network.profile: expected a value`}},
		{"replay network", []string{"replay", replay, "--network", ""}, 1, []string{`--network: expected a value, got "" (none: without it)`}},
		{"replay smoothing", []string{"replay", replay, "--smoothing", ""}, 1, []string{`--smoothing: expected a value`}},
	})
	r := mustRunCLI(t, "run", "--requests", "10", "--network", "none", "--coalescing", "none", "--frame-ms", "0", "--print-config")
	if !strings.Contains(r.stdout, "profile: none") {
		t.Errorf("none:\n%s", r.stdout)
	}
}
