package sim_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// liveLog records what an Observer sees.
type liveLog struct {
	chunks  map[int][]sim.Chunk
	last    map[int]bool
	ended   []sim.StreamSummary
	replica map[int][]int // every replica index the request's events named
}

func (l *liveLog) Chunk(replica, id int, at sim.Time, tokens int, last bool) {
	l.chunks[id] = append(l.chunks[id], sim.Chunk{At: at, Tokens: tokens})
	if last {
		l.last[id] = true
	}
	l.named(id, replica)
}

func (l *liveLog) Ended(replica int, s *sim.StreamSummary) {
	l.ended = append(l.ended, *s)
	l.named(s.ID, replica)
}

func (l *liveLog) named(id, replica int) {
	if l.replica == nil {
		l.replica = map[int][]int{}
	}
	if r := l.replica[id]; len(r) == 0 || r[len(r)-1] != replica {
		l.replica[id] = append(r, replica)
	}
}

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
	// A Queue is reactive, so the engine models no front end before it
	// (a live driver's requests have passed a real one): compare with a
	// run without it.
	cfg.Server = sim.ServerConfig{}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	batch, err := sim.NewFromSetup(setup, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := batch.Run()

	gen, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
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

// Abort ends a request at the next step start wherever it is — running
// mid-stream or waiting in the queue — frees its blocks and reports it
// ended failed, as its client saw it: the chunks it showed, no gap for the
// silence it ended in, and the reason given, in the result and the
// timeline sink; the rest of the run is unaffected in kind.
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
	sink := &abortLog{}
	e.SetTimelineSink(sink)
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
			e.Abort(0, "cancelled") // running, mid-stream
			e.Abort(3, "drain")     // still waiting
			e.Abort(99, "cancelled")
			aborted = true
		}
	}
	res := e.ServerResult()
	if res.Cancelled != 0 || res.Finished != 2 || res.Aborted["cancelled"] != 1 || res.Aborted["drain"] != 1 || len(res.Aborted) != 2 {
		t.Fatalf("%d cancelled, %d finished, aborted %v; want 0, 2 and one cancelled, one drain", res.Cancelled, res.Finished, res.Aborted)
	}
	status := map[int]sim.Status{}
	for _, s := range log.ended {
		status[s.ID] = s.Status
		if s.ID == 0 && (s.Chunks != 10 || s.E2EL != log.chunks[0][9].At-1) {
			t.Fatalf("aborted stream: %d chunks, E2EL %d; want 10 and its last chunk's %d", s.Chunks, s.E2EL, log.chunks[0][9].At-1)
		}
	}
	if status[0] != sim.StatusFailed || status[3] != sim.StatusFailed || status[1] != sim.StatusFinished || status[2] != sim.StatusFinished {
		t.Fatalf("statuses %v", status)
	}
	why := map[int]string{}
	for _, tl := range sink.lines {
		why[tl.ID] = fmt.Sprintf("%v %s %d", tl.Status, tl.Abort, tl.Chunks)
	}
	if len(why) != 4 || why[0] != "failed cancelled 10" || why[3] != "failed drain 0" || why[1] != "finished  50" {
		t.Fatalf("timelines %v", why)
	}
	for _, w := range res.Worst {
		if w.ID == 0 {
			t.Fatal("the aborted stream is among the worst streams")
		}
	}
	if n := len(log.chunks[0]); n != 10 || log.last[0] {
		t.Fatalf("aborted stream: %d chunks after the abort at 10 (last %v)", n, log.last[0])
	}
	if kv := e.Replica().KV(); kv.Free() != kv.Total() {
		t.Fatalf("%d of %d KV blocks free after the run", kv.Free(), kv.Total())
	}
}

// abortLog keeps what a timeline sink was handed: the status, the abort
// reason and the chunk count of each.
type abortLog struct {
	lines []struct {
		ID     int
		Status sim.Status
		Abort  string
		Chunks int
	}
}

func (l *abortLog) Stream(t *sim.Timeline) {
	l.lines = append(l.lines, struct {
		ID     int
		Status sim.Status
		Abort  string
		Chunks int
	}{t.ID, t.Status, t.Abort, len(t.Chunks)})
}

// Pin sends a request to the replica it names, past the router: of two
// round-robin replicas, requests pinned 1, 1, 0, 1 land there (the router
// would have alternated), the observer names each one's replica in every
// event, each replica reports its own share as routed and its own state,
// and a pin to a replica that does not exist is an error.
func TestLivePinBypassesTheRouter(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cluster.Replicas = 2
	cfg.Cluster.Router.Policy = "round-robin"
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
	pins := []int{1, 1, 0, 1}
	for id, rep := range pins {
		if err := e.Pin(id, rep); err != nil {
			t.Fatal(err)
		}
		q.Push(workloads.Request{ID: id, Arrival: int64(id + 1), InputTokens: 32, OutputTokens: 20, Seed: uint64(id)})
	}
	if err := e.Pin(9, 2); err == nil {
		t.Fatal("a pin to replica 2 of 2 was accepted")
	}
	e.Wake()
	sawBoth := false
	for {
		if _, ok := e.NextEventAt(); !ok {
			break
		}
		e.Step()
		r0, _, kv0 := e.ReplicaNow(0)
		r1, _, kv1 := e.ReplicaNow(1)
		if r0 == 1 && r1 == 3 && kv0 > 0 && kv1 > kv0 {
			sawBoth = true
		}
	}
	if !sawBoth {
		t.Error("ReplicaNow never showed 1 running on replica 0 and 3 on replica 1")
	}
	for id, rep := range pins {
		if got := log.replica[id]; !reflect.DeepEqual(got, []int{rep}) {
			t.Errorf("request %d: events named replicas %v, want [%d]", id, got, rep)
		}
	}
	reps := e.ReplicaReports()
	if reps[0].Routed != 1 || reps[1].Routed != 3 || reps[0].Server.Finished != 1 || reps[1].Server.Finished != 3 {
		t.Errorf("replicas routed %d/%d finished %d/%d, want 1/3 and 1/3", reps[0].Routed, reps[1].Routed, reps[0].Server.Finished, reps[1].Server.Finished)
	}
	if n := e.Routing().Reasons; n != ([len(n)]int{}) {
		t.Errorf("router decisions %v for pinned requests, want none", n)
	}
}
