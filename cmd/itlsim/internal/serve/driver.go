package serve

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// errStopped answers requests that come after the server began to stop.
var errStopped = errors.New("the server is shutting down")

// Why a stream was aborted before its end: the reasons the timelines file
// (its "error") and the served streams' summary (failed_by_reason) give.
const (
	// abortCancelled: the client went away (a disconnect, or its context
	// ended), as vLLM aborts a request on disconnect.
	abortCancelled = "cancelled"
	// abortWriteTimeout: the client stopped reading and a write did not
	// complete within the write timeout: the server cut the stream.
	abortWriteTimeout = "write-timeout"
	// abortDrain: the server stopped and the stream was still going when
	// the drain ran out (or there was none): the server cut it.
	abortDrain = "drain"
)

// event is what a response learns about its stream: a chunk of tokens, or
// the stream's end.
type event struct {
	tokens int      // tokens made visible (a chunk); 0 for an end
	at     sim.Time // simulated time of the chunk or the end
	last   bool     // the chunk that completes the output
	end    bool
	status sim.Status
	reason scheduler.Reason // why it was rejected
}

// stream is one request in flight, as its response sees it.
type stream struct {
	id      int
	prompt  int
	output  int      // tokens it will generate
	arrival sim.Time // simulated arrival
	finish  string   // OpenAI's finish_reason once it ends: "length" at max_tokens, else "stop"
	last    sim.Time // its latest chunk, for the ITL histogram
	sched   sim.Time // its first scheduling; -1 until then
	chunks  int
	box     *mailbox
}

// maxHeld bounds the chunks a mailbox holds for a response that has not
// taken them: past it, a new chunk is merged into the newest one held.
// A response that keeps up takes them as they come (one or two held); one
// whose client stopped reading holds maxHeld chunks however long the
// stream, instead of its whole output.
const maxHeld = 64

// mailbox carries a stream's events from the goroutine that produces them
// (the engine's, or a replay's) to its response, never blocking the
// producer and never holding more than maxHeld chunks and the end.
type mailbox struct {
	mu     sync.Mutex
	held   []event
	end    event
	ended  bool
	merged int           // chunks merged into another because the box was full
	ready  chan struct{} // holds a value while there is something to take
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

func (m *mailbox) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// put adds a chunk; a full box merges it into its newest chunk (the
// tokens add up, the time and last flag are the new chunk's).
func (m *mailbox) put(ev event) {
	m.mu.Lock()
	if n := len(m.held); n >= maxHeld {
		h := &m.held[n-1]
		h.tokens += ev.tokens
		h.at, h.last = ev.at, h.last || ev.last
		m.merged++
	} else {
		m.held = append(m.held, ev)
	}
	m.mu.Unlock()
	m.signal()
}

// close adds the stream's end, after every chunk.
func (m *mailbox) close(ev event) {
	m.mu.Lock()
	m.end, m.ended = ev, true
	m.mu.Unlock()
	m.signal()
}

// take appends what the box holds to dst, in order, the end (if it came)
// last, and empties the box.
func (m *mailbox) take(dst []event) []event {
	m.mu.Lock()
	dst = append(dst, m.held...)
	m.held = m.held[:0]
	if m.ended {
		dst = append(dst, m.end)
		m.ended = false
	}
	m.mu.Unlock()
	return dst
}

// ask is what a handler hands the driver: a request's lengths, and the
// replica whose port it came in on.
type ask struct {
	prompt    int
	maxTokens int // ≥ 1: the output is the scenario's draw capped at it (exactly it with ignoreEOS)
	ignoreEOS bool
	replica   int // the replica to run it (a port per replica); -1: the engine routes it
	reply     chan *stream
}

// backend produces the streams of requests: the live engine or a replay.
type backend interface {
	// start admits a request and returns its stream, whose events arrive in
	// real time; errStopped once the server stops.
	start(ctx context.Context, a ask) (*stream, error)
	// abort ends a stream before its end, for why (abortCancelled: vLLM's
	// abort on disconnect; abortWriteTimeout, abortDrain: the server cut
	// it); a no-op once it ended.
	abort(id int, why string)
	// run drives the backend until ctx ends.
	run(ctx context.Context)
	// clock maps simulated time to wall time.
	wall(at sim.Time) time.Time
}

// driver runs a sim.Engine in real time on one goroutine (run); handlers
// talk to it through asks.
type driver struct {
	eng     *sim.Engine
	queue   *workloads.Queue
	scale   float64 // simulated seconds per wall second
	t0      time.Time
	seed    uint64
	outLen  workloads.Dist
	lenRand seed.Rand
	asks    chan ask
	aborts  chan abortReq
	live    map[int]*stream // requests whose end has not been seen
	nextID  int
	// metrics are one port's (a single replica, or a cluster behind the
	// engine's router: the replicas' sum) or one per replica, each
	// following its replica's state and streams.
	metrics []*metrics
	stopped chan struct{}
	// clock is the wall clock (time.Now; a test's own); lag measures how
	// late each chunk is released against wall(at), while measuring
	// (not in abortAll's steps past the schedule).
	clock     func() time.Time
	lag       *lagTracker
	measuring bool
	// spin is how much of each wait is polled instead of slept (0: none):
	// Go's timers wake about 1 ms late for a wait under 1 ms on Linux.
	spin time.Duration
}

var (
	_ backend      = (*driver)(nil)
	_ sim.Observer = (*driver)(nil)
)

func newDriver(setup *sim.Setup, scale float64, m []*metrics, sink sim.TimelineSink) (*driver, error) {
	q := &workloads.Queue{}
	eng, err := sim.NewFromSetup(setup, q)
	if err != nil {
		return nil, err
	}
	c := setup.Config
	d := &driver{
		eng: eng, queue: q, scale: scale, seed: c.Seed, outLen: c.Workload.OutputLen,
		asks: make(chan ask), aborts: make(chan abortReq, 64), live: map[int]*stream{},
		metrics: m, stopped: make(chan struct{}), clock: time.Now,
		lag: newLagTracker(0, scale, nil),
	}
	if d.outLen.IsZero() { // a trace scenario: lengths came from the file
		d.outLen = workloads.DefaultConfig().OutputLen
	}
	d.lenRand = seed.Stream(c.Seed, "serve/output-len")
	eng.SetObserver(d)
	if sink != nil {
		eng.SetTimelineSink(sink)
	}
	return d, nil
}

func (d *driver) now() sim.Time {
	return sim.Time(float64(d.clock().Sub(d.t0)) * d.scale)
}

func (d *driver) wall(at sim.Time) time.Time {
	return d.t0.Add(time.Duration(float64(at) / d.scale))
}

func (d *driver) start(ctx context.Context, a ask) (*stream, error) {
	a.reply = make(chan *stream, 1)
	select {
	case d.asks <- a:
	case <-d.stopped:
		return nil, errStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return <-a.reply, nil
}

// run owns the engine: it admits asks, processes every event due by the
// simulated now, publishes the state to the metrics, and sleeps until the
// next event or ask. Before the first ask the clock starts at 0.
func (d *driver) run(ctx context.Context) {
	defer close(d.stopped)
	d.t0 = d.clock()
	d.measuring = true
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := d.now()
		for {
			at, ok := d.eng.NextEventAt()
			if !ok || at > now {
				break
			}
			d.eng.Step()
		}
		if len(d.metrics) == 1 {
			d.metrics[0].state(d.eng.ServerNow())
		} else {
			for i, m := range d.metrics {
				m.state(d.eng.ReplicaNow(i))
			}
		}
		var wake <-chan time.Time
		if at, ok := d.eng.NextEventAt(); ok {
			wait := d.wall(at).Sub(d.clock())
			if d.spin > 0 && wait < d.spin {
				if !d.poll(ctx, d.wall(at)) {
					return
				}
				continue
			}
			timer.Reset(wait - d.spin) // woken spin early, then polled
			wake = timer.C
		}
		select {
		case a := <-d.asks:
			d.admit(a)
		case a := <-d.aborts:
			d.eng.Abort(a.id, a.why) // at the next step start
		case <-wake:
		case <-ctx.Done():
			d.measuring = false
			d.abortAll()
			return
		}
		if wake != nil && !timer.Stop() {
			select { // drain a timer that fired while an ask came
			case <-timer.C:
			default:
			}
		}
	}
}

// abortReq is a response's abort: its stream and why.
type abortReq struct {
	id  int
	why string
}

// poll waits for the wall time due, answering asks and aborts, without a
// timer: it yields the processor between looks at the clock. False when
// ctx ended (the streams are aborted then).
func (d *driver) poll(ctx context.Context, due time.Time) bool {
	for d.clock().Before(due) {
		select {
		case a := <-d.asks:
			d.admit(a)
			return true
		case a := <-d.aborts:
			d.eng.Abort(a.id, a.why)
		case <-ctx.Done():
			d.measuring = false
			d.abortAll()
			return false
		default:
			runtime.Gosched()
		}
	}
	return true
}

// abortAll ends every stream still live when the server stops (the
// drain is over, or there was none): the aborts responses sent first, with
// their reasons, then every other one as cut by the drain; the engine
// steps until they have ended, so that every served stream reaches the
// timeline sink and the result. The engine applies an abort at a
// replica's next step start, so this takes a few steps; the bound only
// guards against a broken invariant.
func (d *driver) abortAll() {
	for pending := true; pending; {
		select {
		case a := <-d.aborts:
			d.eng.Abort(a.id, a.why)
		default:
			pending = false
		}
	}
	for range 1 << 20 {
		if len(d.live) == 0 {
			return
		}
		if _, ok := d.eng.NextEventAt(); !ok {
			return
		}
		ids := make([]int, 0, len(d.live))
		for id := range d.live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			d.eng.Abort(id, abortDrain) // an abort of one that has not arrived yet is dropped: the next pass repeats it
		}
		d.eng.Step()
	}
}

func (d *driver) abort(id int, why string) {
	select {
	case d.aborts <- abortReq{id, why}:
	case <-d.stopped:
	}
}

// admit queues a request at the simulated now and wakes the engine; its
// arrival is processed at once by run.
func (d *driver) admit(a ask) {
	out := d.outLen.Sample(&d.lenRand)
	if a.ignoreEOS {
		out = a.maxTokens
	} else {
		out = min(out, a.maxTokens) // the model stops by itself before max_tokens
	}
	at := max(d.now(), d.eng.Now())
	if at0, ok := d.queue.NextAt(); ok { // arrivals never go back in time
		at = max(at, sim.Time(at0))
	}
	id := d.nextID
	d.nextID++
	s := &stream{id: id, prompt: a.prompt, output: out, arrival: at, finish: "stop", sched: -1, box: newMailbox()}
	if out == a.maxTokens {
		s.finish = "length"
	}
	d.live[id] = s
	if a.replica >= 0 {
		_ = d.eng.Pin(id, a.replica) // a handler's replica is a port's: always in range
	}
	d.queue.Push(workloads.Request{
		ID: id, Arrival: int64(at), InputTokens: a.prompt, OutputTokens: out,
		Seed: workloads.RequestSeed(d.seed, id),
	})
	d.eng.Wake()
	a.reply <- s
}

// Chunk implements sim.Observer: the chunk goes to its response's
// mailbox at once; the engine never waits for a response.
func (d *driver) Chunk(replica, id int, at sim.Time, tokens int, last bool) {
	s := d.live[id]
	if s == nil {
		return
	}
	s.box.put(event{tokens: tokens, at: at, last: last})
	var lag time.Duration
	if d.measuring {
		now := d.clock()
		lag = now.Sub(d.wall(at))
		d.lag.observe(lag, now)
	}
	if m := d.metricsOf(replica); m != nil {
		if d.measuring {
			m.scheduleLag(lag)
		}
		if s.chunks > 0 {
			m.itl(at - s.last)
		} else {
			m.ttft(at - s.arrival)
		}
		m.generated(tokens)
	}
	s.chunks++
	s.last = at
}

// Ended implements sim.Observer.
func (d *driver) Ended(replica int, ss *sim.StreamSummary) {
	s := d.live[ss.ID]
	if s == nil {
		return
	}
	delete(d.live, ss.ID)
	s.box.close(event{end: true, at: d.eng.Now(), status: ss.Status, reason: ss.Reject})
	if m := d.metricsOf(replica); m != nil {
		m.ended(ss, s.prompt, s.finish, s.sched)
	}
}

// Step implements sim.StepObserver: tokens per step and preemptions, and
// each request's first scheduling.
func (d *driver) Step(replica int, st *sim.StepReport) {
	m := d.metricsOf(replica)
	if m != nil {
		m.step(st)
	}
	for _, p := range st.Prefills {
		s := d.live[p.ID]
		if s == nil || s.sched >= 0 {
			continue
		}
		s.sched = st.Start
		if m != nil {
			m.scheduled(s.prompt, p.Start)
		}
	}
}

// metricsOf are the metrics a replica's streams count in: its port's.
func (d *driver) metricsOf(replica int) *metrics {
	switch len(d.metrics) {
	case 0:
		return nil
	case 1:
		return d.metrics[0]
	}
	return d.metrics[replica]
}

// replicas is how many replicas the engine runs.
func (d *driver) replicas() int { return len(d.eng.Replicas()) }

// Result is the simulation's result so far; call it only after run returned.
// Its duration is the simulated time served so far.
func (d *driver) result() *sim.Result {
	r := d.eng.ServerResult()
	r.Duration = max(r.Duration, d.eng.Now())
	return r
}
