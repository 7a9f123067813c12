package record

import (
	"fmt"
	"slices"
	"time"
)

// DefaultJitterLimit is the p99 timer lateness above which record warns
// that its recorded gaps may be off.
const DefaultJitterLimit = time.Millisecond

// Jitter is how late the host woke from sleeps: what a recording's times
// can be off by, the client's own timer and scheduling being the clock
// every chunk time is read on.
type Jitter struct {
	Sleeps        int           // sleeps measured
	Sleep         time.Duration // each one's length
	P50, P99, Max time.Duration // how late they woke
}

// MeasureJitter sleeps n times for d and measures how late each wake-up
// came. 200 sleeps of 1 ms take about 0.2 s plus the lateness.
func MeasureJitter(n int, d time.Duration) Jitter {
	return jitterOf(n, d, func() time.Duration {
		t0 := time.Now()
		time.Sleep(d)
		return time.Since(t0)
	})
}

// jitterOf measures n sleeps of d with sleep, which returns how long one
// took (a test's own).
func jitterOf(n int, d time.Duration, sleep func() time.Duration) Jitter {
	j := Jitter{Sleeps: n, Sleep: d}
	if n <= 0 {
		return j
	}
	lates := make([]time.Duration, n)
	for i := range lates {
		lates[i] = max(sleep()-d, 0)
	}
	slices.Sort(lates)
	j.P50, j.P99, j.Max = lates[(n-1)/2], lates[min(n-1, (99*n+99)/100-1)], lates[n-1]
	return j
}

// Line states the measurement.
func (j Jitter) Line() string {
	return fmt.Sprintf("host timer before the run: %d sleeps of %v woke p50 %v, p99 %v, max %v late",
		j.Sleeps, j.Sleep, roundJitter(j.P50), roundJitter(j.P99), roundJitter(j.Max))
}

// Warning is what a p99 lateness over limit means for the recording, at
// time scale scale (recorded times are wall times × scale): "" within it.
func (j Jitter) Warning(limit time.Duration, scale float64) string {
	if j.Sleeps == 0 || j.P99 <= limit {
		return ""
	}
	w := fmt.Sprintf("warning: this host wakes timers up to %v late (p99 of %d sleeps, over %v): recorded gaps may be off by up to %v",
		roundJitter(j.P99), j.Sleeps, limit, roundJitter(j.P99))
	if scale != 1 {
		w += fmt.Sprintf(" (%v in the recording's time at time scale %g)", roundJitter(time.Duration(float64(j.P99)*scale)), scale)
	}
	return w + "; record on a less loaded host, or at a smaller --time-scale with serve"
}

func roundJitter(d time.Duration) time.Duration {
	if d >= 100*time.Microsecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
