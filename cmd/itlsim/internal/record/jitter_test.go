package record

import (
	"strings"
	"testing"
	"time"
)

// The jitter's percentiles are the sleeps' lateness, and the warning
// comes only past the limit, in wall time and, at a time scale, in the
// recording's time.
func TestJitterPercentilesAndWarning(t *testing.T) {
	k := 0
	// 100 sleeps of 1 ms: 98 woke 50 µs late, 2 woke 3 ms late.
	j := jitterOf(100, time.Millisecond, func() time.Duration {
		k++
		if k > 98 {
			return 4 * time.Millisecond
		}
		return time.Millisecond + 50*time.Microsecond
	})
	if j.P50 != 50*time.Microsecond || j.P99 != 3*time.Millisecond || j.Max != 3*time.Millisecond {
		t.Errorf("p50 %v p99 %v max %v; want 50µs, 3ms, 3ms", j.P50, j.P99, j.Max)
	}
	if l := j.Line(); l != "host timer before the run: 100 sleeps of 1ms woke p50 50µs, p99 3ms, max 3ms late" {
		t.Errorf("line %q", l)
	}
	w := j.Warning(time.Millisecond, 10)
	if !strings.Contains(w, "recorded gaps may be off by up to 3ms (30ms in the recording's time at time scale 10)") {
		t.Errorf("warning %q", w)
	}
	if w := j.Warning(5*time.Millisecond, 1); w != "" {
		t.Errorf("3 ms under a 5 ms limit warned: %q", w)
	}
	if z := jitterOf(0, time.Millisecond, nil); z.Warning(0, 1) != "" {
		t.Errorf("no sleeps warned")
	}
	if m := MeasureJitter(3, 100*time.Microsecond); m.Sleeps != 3 || m.P50 < 0 || m.Max < m.P99 {
		t.Errorf("measured %+v", m)
	}
}
