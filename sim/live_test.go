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
