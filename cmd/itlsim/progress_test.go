package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports/progress"
)

// progressRuns runs args three times: as tests run (stderr no terminal),
// with the progress line forced as on a terminal, and forced with --quiet.
func progressRuns(t *testing.T, args ...string) (plain, forced, quiet cliOutcome) {
	t.Helper()
	t.Setenv(progress.ForceEnv, "")
	plain = mustRunCLI(t, args...)
	t.Setenv(progress.ForceEnv, "1")
	forced = mustRunCLI(t, args...)
	quiet = mustRunCLI(t, append(args, "--quiet")...)
	return plain, forced, quiet
}

// checkProgress: on a terminal the line is drawn (and erased: the last
// redraw is followed by the erase), elsewhere and with --quiet nothing of
// it reaches stderr, and stdout never holds any of it.
func checkProgress(t *testing.T, plain, forced, quiet cliOutcome, prefix string, sameStdout bool) {
	t.Helper()
	const redraw = "\r\033[K"
	if !strings.Contains(forced.stderr, redraw+prefix) {
		t.Errorf("forced terminal: no progress line %q on stderr: %q", prefix, forced.stderr)
	}
	// Each redraw starts a segment; the last progress line (one with
	// "elapsed") must be followed by the erase that starts another.
	segs := strings.Split(forced.stderr, redraw)
	for i := len(segs) - 1; i >= 0; i-- {
		if strings.HasPrefix(segs[i], prefix) && strings.Contains(segs[i], " elapsed") {
			if i == len(segs)-1 || strings.Contains(segs[i], "\n") {
				t.Errorf("the progress line is not erased at the end: %q", segs[i])
			}
			break
		}
	}
	if strings.Contains(plain.stderr, "\r") || strings.Contains(quiet.stderr, "\r") {
		t.Errorf("progress drawn without a terminal or with --quiet:\nplain %q\nquiet %q", plain.stderr, quiet.stderr)
	}
	for _, r := range []cliOutcome{plain, forced, quiet} {
		if strings.Contains(r.stdout, "\r") || strings.Contains(r.stdout, prefix+" ") && strings.Contains(r.stdout, "elapsed") {
			t.Errorf("progress on stdout: %q", r.stdout)
		}
	}
	if sameStdout && (forced.stdout != plain.stdout || quiet.stdout != plain.stdout) {
		t.Errorf("stdout changed with the progress line:\nplain\n%s\nforced\n%s", plain.stdout, forced.stdout)
	}
}

func TestProgressRun(t *testing.T) {
	plain, forced, quiet := progressRuns(t, "run", "--requests", "200", "--vary", "scheduler.max_num_seqs=64,128")
	checkProgress(t, plain, forced, quiet, "run: ", true)
	if !strings.Contains(forced.stderr, "/400 requests (") {
		t.Errorf("run's total should be the requests of both runs: %q", forced.stderr)
	}
	if plain.stderr != quiet.stderr {
		t.Errorf("--quiet should leave stderr as without a terminal:\n%q\n%q", plain.stderr, quiet.stderr)
	}
}

func TestProgressSweep(t *testing.T) {
	plain, forced, quiet := progressRuns(t, "sweep", "--requests", "100", "--rate", "6,14", "--seeds", "1")
	checkProgress(t, plain, forced, quiet, "sweep: ", true)
	if !strings.Contains(forced.stderr, "/2 points (") {
		t.Errorf("sweep: want points of 2: %q", forced.stderr)
	}
}

func TestProgressCapacity(t *testing.T) {
	plain, forced, quiet := progressRuns(t, "capacity", "--requests", "100", "--seeds", "1", "--gpu", "h100-sxm-80gb,h200-141gb")
	checkProgress(t, plain, forced, quiet, "capacity: ", true)
	if !strings.HasPrefix(forced.stderr, "\r\033[Kcapacity: 0/2 searches (0%), 0 probes") {
		t.Errorf("capacity: want searches (one per configuration and seed) of 2 and probes: %q", forced.stderr)
	}
	// --sensitivity searches each configuration and seed twice more, and
	// the line counts them in its total from the start.
	plain, forced, quiet = progressRuns(t, "capacity", "--requests", "100", "--seeds", "1", "--sensitivity")
	checkProgress(t, plain, forced, quiet, "capacity: ", true)
	if !strings.HasPrefix(forced.stderr, "\r\033[Kcapacity: 0/3 searches (0%)") {
		t.Errorf("capacity --sensitivity: want searches of 3: %q", forced.stderr)
	}
	if over := regexp.MustCompile(`capacity: (\d+)/(\d+) `).FindAllStringSubmatch(forced.stderr, -1); len(over) == 0 {
		t.Errorf("capacity --sensitivity: no counts: %q", forced.stderr)
	} else {
		for _, m := range over {
			if d, _ := strconv.Atoi(m[1]); d > 3 || m[2] != "3" {
				t.Errorf("capacity --sensitivity: %s/%s searches, want at most 3 of 3", m[1], m[2])
			}
		}
	}
	// --target-rate answers per configuration: the line counts those.
	plain, forced, quiet = progressRuns(t, "capacity", "--requests", "100", "--seeds", "1", "--target-rate", "20", "--gpu", "h100-sxm-80gb,h200-141gb")
	checkProgress(t, plain, forced, quiet, "capacity: ", true)
	if !strings.HasPrefix(forced.stderr, "\r\033[Kcapacity: 0/2 configurations (0%)") {
		t.Errorf("capacity --target-rate: want configurations of 2: %q", forced.stderr)
	}
}

func TestProgressCalibrate(t *testing.T) {
	files := vllm70B(t)
	plain, forced, quiet := progressRuns(t, "calibrate", files[0], "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--evals", "4")
	checkProgress(t, plain, forced, quiet, "calibrate: ", true)
	if !strings.Contains(forced.stderr, "calibrate: 0/4 simulations (0%)") {
		t.Errorf("calibrate: want simulations of --evals from the start: %q", forced.stderr)
	}
	// Leave-one-out fits once per run: --evals each.
	plain, forced, quiet = progressRuns(t, "calibrate", files[0], files[1], "--leave-one-out", "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--evals", "3")
	checkProgress(t, plain, forced, quiet, "calibrate: ", true)
	if !strings.Contains(forced.stderr, "calibrate: 0/6 simulations (0%)") {
		t.Errorf("leave-one-out: want simulations of 2 × --evals: %q", forced.stderr)
	}
}

func TestProgressRecord(t *testing.T) {
	args := func(url string) []string {
		return []string{"record", url, "--served-model-name", "m", "--requests", "5", "--rate", "1000",
			"--input-len", "fixed:4", "--output-len", "fixed:2"}
	}
	// Recorded times differ run to run, so stdout is checked for the
	// line's absence only.
	url := hostileServer(t)
	plain, forced, quiet := progressRuns(t, args(url)...)
	checkProgress(t, plain, forced, quiet, "record: ", false)
	if !strings.Contains(forced.stderr, "/5 requests (") || !strings.Contains(forced.stderr, " sent, ") {
		t.Errorf("record: want requests finished of 5 and sent: %q", forced.stderr)
	}
}
