package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/itlsim/itlsim/sim"
)

// The lag histogram's quantiles land within a bucket (6 %) of the exact
// figure, the maximum is exact, and the warnings follow the threshold: a
// p99 over it says the latencies are inflated by about that much; lags
// over 10 times it that last 25 times it (a clock injected) say the time
// scale is not held, told once at once and again in the summary, while a
// single stall the server catches up from does not.
func TestLagTrackerQuantilesAndWarnings(t *testing.T) {
	var told []string
	tr := newLagTracker(2*time.Millisecond, 10, func(m string) { told = append(told, m) })
	wall := time.Unix(1e9, 0)
	at := func(ms int) time.Time { return wall.Add(time.Duration(ms) * time.Millisecond) }
	for i := range 980 {
		tr.observe(100*time.Microsecond, at(i))
	}
	for i := range 20 {
		tr.observe(10*time.Millisecond, at(1000+i))
	}
	tr.observe(-time.Microsecond, at(1100)) // released a hair early: 0
	l := tr.summary()
	near := func(what string, got, want time.Duration) {
		t.Helper()
		if got < want || float64(got) > 1.06*float64(want) {
			t.Errorf("%s = %v, want %v to within a bucket (6 %%)", what, got, want)
		}
	}
	if l.Events != 1001 || l.Max != 10*time.Millisecond {
		t.Errorf("events %d max %v, want 1001 and 10ms", l.Events, l.Max)
	}
	near("p50", l.P50, 100*time.Microsecond)
	near("p99", l.P99, 10*time.Millisecond)
	w := strings.Join(l.Warnings(), "\n")
	if !strings.Contains(w, "p99 schedule lag 10ms exceeds --max-schedule-lag 2ms") || !strings.Contains(w, "inflated by about 10ms wall (100ms simulated at time scale 10)") {
		t.Errorf("warnings for a p99 of 10 ms: %q", w)
	}
	if l.Held() || l.FellBehind || len(told) != 0 {
		t.Errorf("10 ms under the 20 ms bound: held %v fell behind %v told %q; want not held, not behind, nothing told", l.Held(), l.FellBehind, told)
	}
	// A stall: 60 ms late, then 30 ms 40 ms on, then caught up.
	tr.observe(60*time.Millisecond, at(2000))
	tr.observe(30*time.Millisecond, at(2040))
	tr.observe(time.Millisecond, at(2042))
	tr.observe(40*time.Millisecond, at(2100)) // a new stretch behind starts here
	if tr.summary().FellBehind || len(told) != 0 {
		t.Fatalf("a stall caught up from within 50 ms was taken for a scale not held: %q", told)
	}
	for i := range 6 { // behind and growing, 10 ms apart: behind since 2100, 50 ms at the fifth
		tr.observe(time.Duration(40+10*i)*time.Millisecond, at(2110+10*i))
	}
	if len(told) != 1 || !strings.Contains(told[0], "has stayed more than 20ms behind for 50ms") || !strings.Contains(told[0], "cannot hold time scale 10") {
		t.Fatalf("50 ms behind the 20 ms bound told %q; want one warning that the scale is not held", told)
	}
	l = tr.summary()
	if !l.FellBehind || !strings.Contains(strings.Join(l.Warnings(), "\n"), "could not hold time scale 10: the schedule stayed more than 20ms behind for 50ms or longer (up to 90ms)") {
		t.Errorf("summary after falling behind: %+v %q", l, l.Warnings())
	}
	if !strings.Contains(l.Line(), "schedule lag over 1011 chunk releases: p50 ") {
		t.Errorf("line: %q", l.Line())
	}

	ok := newLagTracker(0, 1, nil)
	for i := range 100 {
		ok.observe(50*time.Microsecond, at(i))
	}
	if l := ok.summary(); !l.Held() || len(l.Warnings()) != 0 || l.Threshold != DefaultMaxScheduleLag {
		t.Errorf("50 µs lags under the default threshold: held %v warnings %q threshold %v", l.Held(), l.Warnings(), l.Threshold)
	}
	if l := newLagTracker(0, 1, nil).summary(); !l.Held() || l.P99 != 0 || l.Line() != "schedule lag: no chunk released" {
		t.Errorf("no events: %+v %q", l, l.Line())
	}
}

// The driver measures each chunk against its scheduled wall time on its
// own clock: a chunk released 3 ms after wall(at) counts 3 ms in the
// summary and in itlsim:schedule_lag_seconds; the steps that end the
// streams at shutdown (past the schedule) count nowhere.
func TestDriverMeasuresLagOnItsClock(t *testing.T) {
	setup, err := sim.DefaultConfig().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics("sim-model")
	d, err := newDriver(setup, 2, []*metrics{m}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1e9, 0)
	wall := base
	d.clock = func() time.Time { return wall }
	d.t0, d.measuring = base, true
	d.live[0] = &stream{id: 0, sched: -1, box: newMailbox()}
	at := sim.FromMS(20) // 10 ms of wall at scale 2
	wall = base.Add(13 * time.Millisecond)
	d.Chunk(0, 0, at, 1, false)
	d.measuring = false
	d.Chunk(0, 0, at+sim.FromMS(20), 1, false)
	l := d.lag.summary()
	if l.Events != 1 || l.Max != 3*time.Millisecond {
		t.Fatalf("lag summary %+v; want one event 3 ms late", l)
	}
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fams {
		if f.GetName() != metricScheduleLag {
			continue
		}
		found = true
		h := f.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 1 || h.GetSampleSum() != 0.003 {
			t.Errorf("%s: %d samples summing %g; want 1 of 0.003", metricScheduleLag, h.GetSampleCount(), h.GetSampleSum())
		}
		if b := h.GetBucket(); b[0].GetUpperBound() != 1e-5 || b[len(b)-1].GetUpperBound() != 1 {
			t.Errorf("%s buckets from %g to %g; want 10 µs to 1 s", metricScheduleLag, b[0].GetUpperBound(), b[len(b)-1].GetUpperBound())
		}
	}
	if !found {
		t.Errorf("/metrics has no %s", metricScheduleLag)
	}
}

// A time scale whose one-sequence decode step, scaled, comes faster than
// the host's timer can wake is warned of before the run; one within it is
// not.
func TestScaleWarning(t *testing.T) {
	setup, err := sim.DefaultConfig().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if w := ScaleWarning(setup, 1, 60*time.Microsecond); w != "" {
		t.Errorf("time scale 1 warned: %s", w)
	}
	if w := ScaleWarning(setup, 1e6, 60*time.Microsecond); !strings.Contains(w, "time scale 1e+06 releases a one-sequence decode step") || !strings.Contains(w, "timer granularity of 60µs") {
		t.Errorf("time scale 1e6: %q", w)
	}
	if g := TimerGranularity(3); g < 0 {
		t.Errorf("granularity %v < 0", g)
	}
}
