package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// At a time scale no host can hold (a simulated 8 ms decode step released
// every 80 ns, while stepping the engine costs microseconds of CPU) serve
// says so: before listening (under the host's timer granularity), and on
// stopping, the schedule lag's p99 over --max-schedule-lag with the
// inflation it puts on clients' latencies, on stderr and in the JSON's
// realtime block, which says the schedule was not held. record states its
// host's timer lateness beside the results.
func TestServeWarnsAtATimeScaleItCannotHold(t *testing.T) {
	lengths := []string{"--input-len", "fixed:64", "--output-len", "fixed:4000"}
	s := startServe(t, append([]string{"--time-scale", "1e5", "--exit-after", "8", "--format", "json"}, lengths...)...)
	r := mustRunCLI(t, append([]string{"record", s.url, "--time-scale", "1e5", "--requests", "8", "--rate", "1e6", "--timer-probe", "50"}, lengths...)...)
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, s.stderr.String())
	}
	stderr := s.stderr.String()
	for _, want := range []string{
		"warning: time scale 100000 releases a one-sequence decode step",
		"itlsim serve: schedule lag over 32000 chunk releases: p50 ",
		"exceeds --max-schedule-lag 2ms: latencies recorded by clients are inflated by about",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's stderr lacks %q:\n%s", want, stderr)
		}
	}
	var doc struct {
		Runs []struct {
			Realtime *struct {
				TimeScale float64  `json:"time_scale"`
				Events    int      `json:"events"`
				P99       float64  `json:"schedule_lag_p99_s"`
				Max       float64  `json:"schedule_lag_max_s"`
				Limit     float64  `json:"max_schedule_lag_s"`
				Held      bool     `json:"held"`
				Notes     []string `json:"notes"`
			} `json:"realtime"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(s.stdout.String()), &doc); err != nil {
		t.Fatalf("serve's JSON: %v", err)
	}
	if len(doc.Runs) != 1 || doc.Runs[0].Realtime == nil {
		t.Fatalf("serve's JSON has no realtime block: %.400s", s.stdout.String())
	}
	rt := doc.Runs[0].Realtime
	if rt.TimeScale != 1e5 || rt.Events != 32000 || rt.Held || rt.P99 <= rt.Limit || rt.Limit != 0.002 || rt.Max < rt.P99 || len(rt.Notes) < 2 {
		t.Errorf("realtime block %+v: want 32000 events at scale 1e5, p99 over the 2 ms limit, not held, the line and a warning", rt)
	}
	t.Logf("serve at 1e5: %s", strings.Join(rt.Notes, " | "))
	if !strings.Contains(r.stderr, "itlsim record: host timer before the run: 50 sleeps of 1ms woke p50 ") {
		t.Errorf("record's stderr lacks the timer measurement:\n%s", r.stderr)
	}
	_, notes, _ := strings.Cut(r.stdout, "notes:")
	if !strings.Contains(notes, "host timer before the run: 50 sleeps of 1ms woke p50 ") {
		t.Errorf("record's notes lack the timer measurement:\n%s", r.stdout)
	}
}

// record measures its host's timer by default (200 sleeps of 1 ms), states
// it in the JSON's source notes, and --timer-probe 0 measures nothing;
// a negative count is refused.
func TestRecordStatesItsTimerJitter(t *testing.T) {
	lengths := []string{"--input-len", "fixed:8", "--output-len", "fixed:3"}
	s := startServe(t, append([]string{"--time-scale", "10", "--exit-after", "2"}, lengths...)...)
	r := mustRunCLI(t, append([]string{"record", s.url, "--time-scale", "10", "--requests", "1", "--format", "json"}, lengths...)...)
	var doc struct {
		Runs []struct {
			Source struct {
				Notes []string `json:"notes"`
			} `json:"source"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Runs) != 1 {
		t.Fatalf("record's JSON (%v): %.300s", err, r.stdout)
	}
	if n := strings.Join(doc.Runs[0].Source.Notes, "\n"); !strings.Contains(n, "host timer before the run: 200 sleeps of 1ms woke p50 ") {
		t.Errorf("source notes lack the timer measurement: %q", n)
	}
	r = mustRunCLI(t, append([]string{"record", s.url, "--time-scale", "10", "--requests", "1", "--timer-probe", "0"}, lengths...)...)
	if strings.Contains(r.stderr+r.stdout, "host timer") {
		t.Errorf("--timer-probe 0 measured the timer:\n%s\n%s", r.stderr, r.stdout)
	}
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, s.stderr.String())
	}
	bad := execCLI(t, "record", s.url, "--timer-probe", "-1")
	if bad.code == 0 || !strings.Contains(bad.stderr, "--timer-probe: must be ≥ 0") || bad.stdout != "" {
		t.Errorf("--timer-probe -1: exit %d stdout %q stderr %q", bad.code, bad.stdout, bad.stderr)
	}
	for _, c := range [][2]string{
		{"--max-schedule-lag=0s", "--max-schedule-lag: must be > 0"},
		{"--spin-wait=-1ms", "--spin-wait: must be in [0, 1s]"},
		{"--spin-wait=2s", "--spin-wait: must be in [0, 1s]"},
	} {
		bad = execCLI(t, "serve", c[0])
		if bad.code == 0 || !strings.Contains(bad.stderr, c[1]) || bad.stdout != "" {
			t.Errorf("%s: exit %d stdout %q stderr %q", c[0], bad.code, bad.stdout, bad.stderr)
		}
	}
}

// --spin-wait polls the last stretch of each wait: serve at time scale 20
// with it serves and measures every chunk as without (the lag it buys is
// machine-dependent: docs/live.md measures it, no test asserts it).
func TestServeSpinWait(t *testing.T) {
	lengths := []string{"--input-len", "fixed:8", "--output-len", "fixed:20"}
	s := startServe(t, append([]string{"--time-scale", "20", "--exit-after", "4", "--spin-wait", "1ms"}, lengths...)...)
	mustRunCLI(t, append([]string{"record", s.url, "--time-scale", "20", "--requests", "4", "--rate", "100", "--timer-probe", "0"}, lengths...)...)
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exit %d: %s", code, s.stderr.String())
	}
	if !strings.Contains(s.stdout.String(), "4 / 4") || !strings.Contains(s.stderr.String(), "schedule lag over 80 chunk releases") {
		t.Errorf("serve with --spin-wait:\n%s\n%s", s.stdout.String(), s.stderr.String())
	}
}
