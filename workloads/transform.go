package workloads

import (
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// transform applies Config's transformations to a source, in this order:
//
//  1. window: keep requests arriving in [start, end) on the source's own
//     clock and shift them by start (so the window starts at 0);
//  2. sample: keep each request with probability p (seeded stream "sample");
//  3. cap: cut prompt + output to capTokens (the prompt to capTokens − 1
//     first, then the output to what remains);
//  4. scale: divide every arrival time by scale (time_scale, or the factor
//     that brings the mean rate to target_rate).
//
// It numbers the requests it keeps 0, 1, 2, ... and seeds them with
// RequestSeed(seed, ID). Sources arrive sorted, so the window stops reading
// at its end.
type transform struct {
	seed       uint64
	start, end int64 // ns; end < 0: no window
	sample     float64
	capTokens  int
	scale      float64
	rng        *seed.Rand
	src        Source
	next       int
	done       bool
}

// newTransform reads the transformations of c (already validated).
func newTransform(c Config, seed uint64) transform {
	t := transform{seed: seed, end: -1, sample: 1, capTokens: c.CapTokens, scale: 1}
	if !c.WindowS.IsZero() {
		t.start = int64(math.Round(c.WindowS.Start * 1e9))
		t.end = math.MaxInt64
		if e := c.WindowS.End * 1e9; e < math.MaxInt64 {
			t.end = int64(math.Round(e))
		}
	}
	if c.Sample > 0 && c.Sample < 1 {
		t.sample = c.Sample
	}
	if c.TimeScale > 0 {
		t.scale = c.TimeScale
	}
	return t
}

// identity reports whether t changes nothing, so a source may be used bare
// (every source numbers and seeds its requests as t would).
func (t transform) identity() bool {
	return t.end < 0 && t.sample == 1 && t.capTokens == 0 && t.scale == 1
}

// wrap returns a Source applying t to src.
func (t transform) wrap(src Source) *transform {
	w := t
	w.src = src
	w.rng = stream(t.seed, "sample")
	return &w
}

// Next implements Source.
func (t *transform) Next(r *Request) bool {
	for !t.done {
		if !t.src.Next(r) {
			t.finish()
			return false
		}
		at := r.Arrival
		if t.end >= 0 {
			if at < t.start {
				continue
			}
			if at >= t.end {
				t.finish()
				return false
			}
			at -= t.start
		}
		if t.sample < 1 && t.rng.Float64() >= t.sample {
			continue
		}
		if t.capTokens > 0 {
			r.InputTokens = min(r.InputTokens, t.capTokens-1)
			r.OutputTokens = min(r.OutputTokens, t.capTokens-r.InputTokens)
		}
		if t.scale != 1 {
			at = int64(math.Round(min(float64(at)/t.scale, maxArrivalNs)))
		}
		r.Arrival = at
		r.ID = t.next
		r.Seed = RequestSeed(t.seed, t.next)
		t.next++
		return true
	}
	return false
}

// finish marks t done and closes its source if it holds a file.
func (t *transform) finish() {
	t.done = true
	if c, ok := t.src.(interface{ Close() error }); ok {
		c.Close()
	}
}

// Err returns the error that ended the underlying source, if any.
func (t *transform) Err() error { return Err(t.src) }

// Close releases the underlying source's file, if any.
func (t *transform) Close() error {
	if c, ok := t.src.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

var _ Source = (*transform)(nil)

// sourceStats are the figures measure collects.
type sourceStats struct {
	n           int
	first, last int64 // arrival times of the first and last request, ns
}

// measure drains src, counting its requests and noting its span.
func measure(src Source) sourceStats {
	var st sourceStats
	var r Request
	for src.Next(&r) {
		if st.n == 0 {
			st.first = r.Arrival
		}
		st.last = r.Arrival
		st.n++
	}
	return st
}
