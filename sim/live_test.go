package sim_test

import (
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// liveLog records what an Observer sees.
type liveLog struct {
	chunks map[int][]sim.Chunk
	last   map[int]bool
	ended  []sim.StreamSummary
}

func (l *liveLog) Chunk(id int, at sim.Time, tokens int, last bool) {
	l.chunks[id] = append(l.chunks[id], sim.Chunk{At: at, Tokens: tokens})
	if last {
		l.last[id] = true
	}
}

func (l *liveLog) Ended(s *sim.StreamSummary) { l.ended = append(l.ended, *s) }

type sinkLog map[int][]sim.Chunk

func (s sinkLog) Stream(t *sim.Timeline) { s[t.ID] = append([]sim.Chunk(nil), t.Chunks...) }

// A real-time driver pushes each request into a Queue when it arrives,
// wakes the engine and steps only the events due: fed the requests of a
// generated workload one by one that way, the engine produces the same
// result as when it pulls them itself, and the observer sees every chunk
// the timelines hold, as they are emitted.
func TestLiveDrivingMatchesARun(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = 60
	cfg.Workload.Rate = 40
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	batch, err := sim.NewFromSetup(setup, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := batch.Run()

	gen, err := workloads.New(cfg.Workload, sim.Stream(cfg.Seed, "workload"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := workloads.Collect(gen, 0)
	q := &workloads.Queue{}
	e, err := sim.NewFromSetup(setup, q)
	if err != nil {
		t.Fatal(err)
	}
	log := &liveLog{chunks: map[int][]sim.Chunk{}, last: map[int]bool{}}
	sink := sinkLog{}
	e.SetObserver(log)
	e.SetTimelineSink(sink)
	if _, ok := e.NextEventAt(); ok {
		t.Fatal("an event is pending before any request was pushed")
	}
	for _, r := range reqs {
		// Step every event due before the request, as a driver sleeping
		// until the next event would.
		for {
			at, ok := e.NextEventAt()
			if !ok || at >= sim.Time(r.Arrival) {
				break
			}
			e.Step()
		}
		q.Push(r)
		e.Wake()
		if at, ok := e.NextEventAt(); !ok || at > sim.Time(r.Arrival) {
			t.Fatalf("request %d: next event at %d, %v after Wake; want its arrival %d", r.ID, at, ok, r.Arrival)
		}
	}
	for {
		if _, ok := e.NextEventAt(); !ok {
			break
		}
		e.Step()
	}
	got := e.ServerResult()
	if got.Finished != want.Finished || got.Requests != want.Requests || got.Steps != want.Steps {
		t.Fatalf("live: %d finished of %d in %d steps; run: %d of %d in %d", got.Finished, got.Requests, got.Steps, want.Finished, want.Requests, want.Steps)
	}
	if !reflect.DeepEqual(got.Streams, want.Streams) {
		t.Fatal("live-driven streams differ from the run's")
	}
	if len(log.ended) != len(reqs) {
		t.Fatalf("observer saw %d ends of %d requests", len(log.ended), len(reqs))
	}
	for id, chunks := range sink {
		if !reflect.DeepEqual(log.chunks[id], chunks) {
			t.Fatalf("request %d: observer chunks %v, timeline %v", id, log.chunks[id], chunks)
		}
		if !log.last[id] {
			t.Fatalf("request %d: no chunk marked last", id)
		}
	}
}

// Abort cancels a request at the next step start wherever it is — running
// mid-stream or waiting in the queue — frees its blocks and reports it
// ended as cancelled; the rest of the run is unaffected in kind.
func TestLiveAbort(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Scheduler.MaxNumSeqs = 2
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	q := &workloads.Queue{}
	e, err := sim.NewFromSetup(setup, q)
	if err != nil {
		t.Fatal(err)
	}
	log := &liveLog{chunks: map[int][]sim.Chunk{}, last: map[int]bool{}}
	e.SetObserver(log)
	for id := range 4 { // 0 and 1 run, 2 and 3 wait
		q.Push(workloads.Request{ID: id, Arrival: 1, InputTokens: 32, OutputTokens: 50, Seed: uint64(id)})
	}
	e.Wake()
	aborted := false
	for {
		if _, ok := e.NextEventAt(); !ok {
			break
		}
		e.Step()
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		if !aborted && len(log.chunks[0]) == 10 {
			e.Abort(0) // running, mid-stream
			e.Abort(3) // still waiting
			e.Abort(99)
			aborted = true
		}
	}
	res := e.ServerResult()
	if res.Cancelled != 2 || res.Finished != 2 {
		t.Fatalf("%d cancelled, %d finished; want 2 and 2", res.Cancelled, res.Finished)
	}
	status := map[int]sim.Status{}
	for _, s := range log.ended {
		status[s.ID] = s.Status
	}
	if status[0] != sim.StatusCancelled || status[3] != sim.StatusCancelled || status[1] != sim.StatusFinished || status[2] != sim.StatusFinished {
		t.Fatalf("statuses %v", status)
	}
	if n := len(log.chunks[0]); n != 10 || log.last[0] {
		t.Fatalf("aborted stream: %d chunks after the abort at 10 (last %v)", n, log.last[0])
	}
	if kv := e.Replica().KV(); kv.Free() != kv.Total() {
		t.Fatalf("%d of %d KV blocks free after the run", kv.Free(), kv.Total())
	}
}
