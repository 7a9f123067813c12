package main

import (
	"bytes"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
)

// gcPeak records the largest live heap the collector finds over its
// cycles while it watches: a finalizer re-armed at every collection reads
// what that collection marked live (it may skip a cycle when two finish
// before it runs, never invent one).
type gcPeak struct {
	mu       sync.Mutex
	peak     uint64
	cycles   int
	watching bool
}

func (g *gcPeak) start() {
	runtime.GC()
	g.mu.Lock()
	g.peak, g.cycles, g.watching = 0, 0, true
	g.mu.Unlock()
	g.arm()
}

func (g *gcPeak) arm() {
	// 64 bytes: not a tiny allocation, which may share a block with others
	// and never be freed.
	runtime.SetFinalizer(new([8]uint64), func(*[8]uint64) {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.watching {
			return
		}
		g.peak = max(g.peak, s[0].Value.Uint64())
		g.cycles++
		g.arm()
	})
}

func (g *gcPeak) stop() (peak uint64, cycles int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.watching = false
	return g.peak, g.cycles
}

// TestPeakHeapPerRequest: a run 20× as long, with --json, --streams and
// the table, does not grow the peak live heap by more than the finished
// requests' summaries (144 bytes each) and the little held beside them
// for a while (the QoE scores, 16 bytes, until they are in the summaries;
// one population buffer of 8 bytes a stream while the summary is made)
// and what the collector finds of the writers' garbage: at most 200 bytes
// per extra request (337 before the summaries were chunked and the
// populations no longer kept). The peak is the largest live heap the
// collector found over the run (from the first event to the last byte
// written); time-series buckets are held to a few (they are bounded
// separately, at most 1024).
//
// The collector runs at GOGC=10 here, not the CLI's 25: what a collection
// finds live includes what the run allocated while it marked, and a run
// that allocates fast (its writers' buffers) made that floating garbage
// look like memory per request. At 25 the same builds measured 186-216
// (commit cf31960) and 182-197 (3dff6a0, the same day; 148-165 when the
// bound was set), at 10 they measure 154-184 and 159-171.
func TestPeakHeapPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 4,096 and 81,920 requests")
	}
	t.Setenv("GOGC", "10") // so that Main leaves the collector's target to the test
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	dir := t.TempDir()
	var g gcPeak
	peak := func(requests int) uint64 {
		var stdout, stderr bytes.Buffer
		args := []string{"run", "--requests", strconv.Itoa(requests), "--rate", "200",
			"--input-len", "fixed:32", "--output-len", "uniform:4,12", "--set", "metrics.timeseries_interval_s=1e5",
			"--json", filepath.Join(dir, "j.json"), "--streams", filepath.Join(dir, "s.csv")}
		g.start()
		code := Main(args, &stdout, &stderr)
		p, cycles := g.stop()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		if cycles < 5 {
			t.Fatalf("%d collections during a run of %d requests: too few to see its peak", cycles, requests)
		}
		t.Logf("%d requests: peak live heap %d bytes over %d collections", requests, p, cycles)
		return p
	}
	// Floating garbage only ever adds to what a collection finds live, and
	// more of it on a loaded machine (215 bytes seen at a load average of
	// 7 on two cores, 165-180 idle, same build), so the test takes the
	// smallest of up to three measurements: a real regression shows in
	// every one of them.
	const n = 4096
	best := math.Inf(1)
	for attempt := 0; attempt < 3 && best > 200; attempt++ {
		short, long := peak(n), peak(20*n)
		per := float64(int64(long)-int64(short)) / float64(19*n)
		t.Logf("%.1f bytes per extra request", per)
		best = min(best, per)
	}
	if best > 200 {
		t.Errorf("the peak live heap grows %.1f bytes per request (the least of three measurements), want at most 200", best)
	}
}
