package serve

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// DefaultMaxScheduleLag is the p99 schedule lag above which serve warns
// that the latencies its clients record are inflated.
const DefaultMaxScheduleLag = 2 * time.Millisecond

// behindFactor and sustainFactor: events released more than behindFactor
// times the lag threshold late, one after another for sustainFactor times
// the threshold of wall time, mean the server fell behind its schedule and
// is not catching up: it cannot hold the time scale. A host that stalls
// the process once (a chunk tens of ms late) catches up within a few ms,
// faster than the engine's steps are due, and is not taken for one that
// cannot keep up.
const (
	behindFactor  = 10
	sustainFactor = 25
)

// Lag buckets: lagPerDecade log-spaced buckets per decade from lagFloor,
// lagDecades decades (1 µs to 100 s), below the floor counted as 0. A
// quantile is a bucket's upper bound: within 6 % of the exact figure.
const (
	lagFloor     = time.Microsecond
	lagPerDecade = 40
	lagDecades   = 8
	lagBuckets   = lagPerDecade * lagDecades
)

// lagTracker measures how late events are released against their
// scheduled wall time: a fixed histogram (no allocation per event), the
// maximum, and whether the schedule fell behind by more than the bound.
// Safe for concurrent use (a replay releases from one goroutine per
// stream).
type lagTracker struct {
	threshold time.Duration // the p99 above which the summary warns
	behind    time.Duration // a lag above which the schedule is behind
	sustain   time.Duration // behind for this long: the time scale is not held
	scale     float64
	warn      func(string) // called once, when the schedule first falls behind

	mu        sync.Mutex
	under     uint64 // lags below lagFloor
	counts    [lagBuckets + 1]uint64
	n         uint64
	max       time.Duration
	sum       time.Duration
	over      bool      // the latest event was later than behind
	overSince time.Time // the release of the first of those in a row
	fellBack  bool      // behind for sustain or longer
}

func newLagTracker(threshold time.Duration, scale float64, warn func(string)) *lagTracker {
	if threshold <= 0 {
		threshold = DefaultMaxScheduleLag
	}
	return &lagTracker{threshold: threshold, behind: behindFactor * threshold, sustain: sustainFactor * threshold, scale: scale, warn: warn}
}

// lagBucket is the bucket of a lag ≥ lagFloor; the last holds everything
// past the top.
func lagBucket(d time.Duration) int {
	i := int(math.Floor(math.Log10(float64(d)/float64(lagFloor)) * lagPerDecade))
	return min(max(i, 0), lagBuckets)
}

// lagUpper is bucket i's upper bound.
func lagUpper(i int) time.Duration {
	return time.Duration(float64(lagFloor) * math.Pow(10, float64(i+1)/lagPerDecade))
}

// observe counts one event released at wall time now, lag late (a
// negative lag, an event released a hair early by rounding, counts as 0).
func (t *lagTracker) observe(lag time.Duration, now time.Time) {
	lag = max(lag, 0)
	t.mu.Lock()
	t.n++
	t.sum += lag
	t.max = max(t.max, lag)
	if lag < lagFloor {
		t.under++
	} else {
		t.counts[lagBucket(lag)]++
	}
	first := false
	switch {
	case lag <= t.behind:
		t.over = false
	case !t.over:
		t.over, t.overSince = true, now
	case !t.fellBack && now.Sub(t.overSince) >= t.sustain:
		t.fellBack, first = true, true
	}
	t.mu.Unlock()
	if first && t.warn != nil {
		t.warn(fmt.Sprintf("warning: the schedule has stayed more than %v behind for %v (a chunk now released %v after its time): this host cannot hold time scale %g; every latency clients record from here is inflated",
			t.behind, t.sustain, roundLag(lag), t.scale))
	}
}

// quantile is the q-quantile's bucket upper bound (0 with no events); the
// top bucket reports the maximum.
func (t *lagTracker) quantile(q float64) time.Duration {
	if t.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(t.n)))
	rank = max(rank, 1)
	seen := t.under
	if seen >= rank {
		return 0
	}
	for i, c := range t.counts {
		seen += c
		if seen >= rank {
			if i == lagBuckets {
				return t.max
			}
			return min(lagUpper(i), t.max)
		}
	}
	return t.max
}

// Lag is how late a served run released its events against their
// scheduled wall times.
type Lag struct {
	Events        int           // events measured (chunk releases)
	P50, P99, Max time.Duration // wall-clock lateness
	Mean          time.Duration
	Threshold     time.Duration // the p99 above which the run's latencies are called inflated
	Behind        time.Duration // the lag past which the schedule is behind
	Sustain       time.Duration // behind this long: the time scale is not held
	TimeScale     float64
	// FellBehind: events came later than Behind for Sustain or longer:
	// the server could not hold the time scale.
	FellBehind bool
}

func (t *lagTracker) summary() Lag {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := Lag{Events: int(t.n), Max: t.max, Threshold: t.threshold, Behind: t.behind, Sustain: t.sustain, TimeScale: t.scale, FellBehind: t.fellBack}
	if t.n > 0 {
		l.P50, l.P99, l.Mean = t.quantile(0.5), t.quantile(0.99), t.sum/time.Duration(t.n)
	}
	return l
}

// Line is the summary's line: the lag percentiles.
func (l Lag) Line() string {
	if l.Events == 0 {
		return "schedule lag: no chunk released"
	}
	return fmt.Sprintf("schedule lag over %d chunk releases: p50 %v, p99 %v, max %v (wall clock, time scale %g)",
		l.Events, roundLag(l.P50), roundLag(l.P99), roundLag(l.Max), l.TimeScale)
}

// Warnings say what the lag means for the run's latencies: nothing when
// p99 stayed under the threshold.
func (l Lag) Warnings() []string {
	var w []string
	if l.FellBehind {
		w = append(w, fmt.Sprintf("warning: this host could not hold time scale %g: the schedule stayed more than %v behind for %v or longer (up to %v); run at a smaller --time-scale, or on a less loaded host",
			l.TimeScale, l.Behind, l.Sustain, roundLag(l.Max)))
	}
	if l.Events > 0 && l.P99 > l.Threshold {
		w = append(w, fmt.Sprintf("warning: p99 schedule lag %v exceeds --max-schedule-lag %v: latencies recorded by clients are inflated by about %v wall (%v simulated at time scale %g)",
			roundLag(l.P99), l.Threshold, roundLag(l.P99), roundLag(time.Duration(float64(l.P99)*l.TimeScale)), l.TimeScale))
	}
	return w
}

// Held reports whether the run held its schedule: p99 under the
// threshold and never behind.
func (l Lag) Held() bool { return !l.FellBehind && (l.Events == 0 || l.P99 <= l.Threshold) }

func roundLag(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= 100*time.Microsecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}

// TimerGranularity measures the host's timer: the median of how late n
// sleeps of 100 µs wake (the shortest wait a server can make; Linux's
// default timer slack alone is 50 µs). It takes about n × 0.2 ms.
func TimerGranularity(n int) time.Duration {
	const d = 100 * time.Microsecond
	lates := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		time.Sleep(d)
		lates = append(lates, time.Since(t0)-d)
	}
	if len(lates) == 0 {
		return 0
	}
	slices.Sort(lates)
	return max(lates[len(lates)/2], 0)
}

// ScaleWarning checks a time scale against the host before a run: the
// gap between one stream's chunks at its shortest (a decode step of one
// sequence, as the scenario's cost model prices it at the mean prompt
// length) divided by the scale, against the host's timer granularity. A
// scaled gap under it cannot be kept: chunks are released in clumps, each
// late by up to the granularity, and the engine, which steps in real CPU
// time, falls behind. It warns instead of refusing: a load generator that
// does not care for timing may run as fast as it can. "" when it holds.
func ScaleWarning(setup *sim.Setup, scale float64, granularity time.Duration) string {
	if setup == nil || setup.Cost == nil || granularity <= 0 {
		return ""
	}
	ctx := int(setup.Config.Workload.InputLen.Mean())
	var b cost.Batch
	b.AddDecode(max(ctx, 1))
	step := time.Duration(setup.Cost.StepNS(&b))
	wall := time.Duration(float64(step) / scale)
	if step <= 0 || wall >= granularity {
		return ""
	}
	return fmt.Sprintf("warning: time scale %g releases a one-sequence decode step (%v simulated) every %v, under this host's timer granularity of %v: chunks will come late and in clumps, and the schedule-lag summary will say by how much",
		scale, roundLag(step), roundLag(wall), roundLag(granularity))
}
