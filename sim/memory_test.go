package sim_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// TestRetainedStatePerRequest: what a finished run keeps — the engine and
// its result — grows by at most 150 bytes per finished request (its
// StreamSummary, 144 bytes, in chunks that are never copied), measured as
// the live heap after a full collection, between a run and one 20× as
// long. Time-series buckets are held to a few (a wide interval): they are
// bounded separately (at most 1024).
func TestRetainedStatePerRequest(t *testing.T) {
	const n = 4096 // a whole number of summary chunks at n and 20n
	retained := func(requests int) uint64 {
		cfg := chatConfig(requests)
		cfg.Workload.Rate = 200
		cfg.Workload.InputLen = workloads.MustParseDist("fixed:32")
		cfg.Workload.OutputLen = workloads.MustParseDist("uniform:4,12")
		cfg.Metrics.TimeseriesIntervalS = 1e5
		e, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Run()
		if r.Finished != requests || r.Streams.Len() != requests {
			t.Fatalf("finished %d, %d summaries; want %d", r.Finished, r.Streams.Len(), requests)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(e) // the engine and its result are what is measured
		return ms.HeapAlloc
	}
	short := retained(n)
	long := retained(20 * n)
	per := float64(int64(long)-int64(short)) / float64(19*n)
	t.Logf("live heap %d bytes after %d requests, %d after %d: %.1f bytes per extra request (StreamSummary %d)",
		short, n, long, 20*n, per, unsafe.Sizeof(sim.StreamSummary{}))
	if per > 150 {
		t.Errorf("the run retains %.1f bytes per finished request, want at most 150", per)
	}
}
