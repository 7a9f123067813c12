package sim

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim/frontend"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Engine runs one simulation: a clock, an event queue, the workload and
// the replicas it feeds. Build it with New, then call Run, or Step
// repeatedly to inspect the state between events.
type Engine struct {
	setup  *Setup
	now    Time
	queue  eventQueue
	arr    arrivals
	reps   []*Replica // every replica on this clock; events name theirs by index
	rec    *recording // what the replicas' recorders share
	res    *Result    // the cluster's results, merged when the run ends (one replica: its own)
	done   bool
	err    error        // the run stopped at the Horizon (overrun)
	workAt Time         // the last event that was not a snapshot: the run's end
	asks   liveAsks     // what a live driver asked of the run (live.go)
	groups []routeGroup // one router over every replica, or with P/D pools the prefill's and the decode's (route.go)
	link   *kvLink      // between prefill and decode pools; nil otherwise (disagg.go)

	shared   *clusterHists // the histograms a cluster's replicas record into (ITL by position, over time); nil for one replica
	finished bool          // Run reduced ended streams on the finisher
	spares   *Spares       // where histograms come from and go back to (NewReusing, Release); nil allocates
	classes  classes
}

// arrivals is where the engine's requests come from: the workload source
// and the request it read next.
type arrivals struct {
	src      workloads.Source
	reactive workloads.Reactive // src, when its arrivals follow ends
	next     workloads.Request  // the request read and not yet arrived
	pending  bool               // an arrival event is scheduled
	at       Time               // the earliest arrival event scheduled (reactive sources)
	content  kvcache.Content    // the arriving request's content, named before it is routed
}

// classes are the request classes of a run's results, indexed in the
// order they appear (configured classes first).
type classes struct {
	index map[string]int16
	names []string
}

// New builds an engine for cfg. It resolves the configuration (see
// Config.Resolve) and opens the workload.
func New(cfg Config) (*Engine, error) {
	s, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	return NewFromSetup(s, nil)
}

// NewFromSetup builds an engine from a resolved setup; many engines may
// share one Setup. src supplies the requests; nil generates them from the
// setup's workload configuration.
func NewFromSetup(s *Setup, src workloads.Source) (*Engine, error) {
	return newFromSetup(s, src, nil)
}

// newFromSetup is NewFromSetup with histograms taken from sp (NewReusing).
func newFromSetup(s *Setup, src workloads.Source, sp *Spares) (*Engine, error) {
	c := &s.Config
	requests := int64(-1) // the workload's own count
	inner := src
	if c, ok := src.(*workloads.InFlight); ok {
		inner = c.Source()
	}
	if sl, ok := inner.(*workloads.Slice); ok {
		requests = int64(len(sl.Requests))
	} else if src != nil {
		requests = 0 // a source that knows its own length (a trace) is not estimated
	}
	if err := checkMemory(s, requests); err != nil {
		return nil, err
	}
	if src == nil {
		var err error
		if src, err = workloads.New(c.Workload, seed.Derive(c.Seed, "workload")); err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
	}
	pools := s.Pools
	if len(pools) == 0 { // a Setup built by hand: one replica of itself
		pools = []Pool{{Replicas: 1, Setup: s}}
	}
	stages := 0 // one front end per replica
	for _, p := range pools {
		stages += p.Replicas
	}
	if n := c.Workload.MaxConcurrency; n > 0 {
		if _, reactive := src.(workloads.Reactive); !reactive {
			src = workloads.NewInFlight(src, n)
		}
	}
	src = frontend.New(src, c.Server, stages)
	e := &Engine{setup: s, arr: arrivals{src: src}, classes: classes{index: map[string]int16{}}, spares: sp}
	e.rec = &recording{stall: FromMS(c.Metrics.StallThresholdMS), worstK: c.Metrics.WorstStreams, reference: c.Reference}
	if stages > 1 {
		delivery := false
		for _, p := range pools {
			delivery = delivery || p.Setup.Delivery != nil
		}
		e.shared = newClusterHists(Time(c.Metrics.TimeseriesIntervalS*1e9), !delivery, sp)
	}
	var infos []router.Replica
	for _, p := range pools {
		for j := range p.Replicas {
			i := len(e.reps)
			name := fmt.Sprintf("replica-%d", i)
			if p.Name != "" {
				name = fmt.Sprintf("%s-%d", p.Name, j)
			}
			r, err := newReplica(i, name, p.Name, p.Setup, c.Seed, e.newRecorder(p.Setup))
			if err != nil {
				return nil, err
			}
			if d := p.Setup.Delivery; d != nil {
				if f := d.Config().Failover; f.WatchdogMS > 0 && !f.KeepPrimary {
					r.watch.ns = FromMS(f.WatchdogMS)
				}
			}
			if p.Role != "" {
				if d := p.Setup.Delivery; d != nil && d.Config().Failover.WatchdogMS > 0 && !d.Config().Failover.KeepPrimary {
					return nil, fmt.Errorf("cluster.pools[%s].role: the failover watchdog (delivery.failover.watchdog_ms) aborting primaries is not modelled with prefill and decode pools (set delivery.failover.keep_primary)", p.Name)
				}
				r.id.role, r.id.handsOff = p.Role, p.Role == RolePrefill
			}
			if c.Reference {
				r.sched.SetReference(true)
			}
			e.reps = append(e.reps, r)
			infos = append(infos, router.Replica{KVTokens: p.Setup.Blocks * p.Setup.Config.KVCache.BlockSize})
		}
	}
	var err error
	if e.groups, err = newGroups(s, e.reps, infos, c.Seed); err != nil {
		return nil, err
	}
	if c.Cluster.Disaggregated() {
		e.link = newKVLink(c.Cluster.KVLink, len(e.reps))
	}
	for _, cl := range s.Classes { // configured classes first, in order
		e.classOf(cl.Name)
	}
	e.arr.reactive, _ = e.arr.src.(workloads.Reactive)
	e.scheduleArrival()
	return e, nil
}

func (e *Engine) push(at Time, class eventClass, replica int32) {
	e.queue.push(at, class, replica)
}

// Now is the simulated time of the last processed event.
func (e *Engine) Now() Time { return e.now }

// Setup is the resolved configuration the engine runs.
func (e *Engine) Setup() *Setup { return e.setup }

// Replica exposes the first replica for inspection between steps.
func (e *Engine) Replica() *Replica { return e.reps[0] }

// Replicas are every replica on the engine's clock, in index order.
func (e *Engine) Replicas() []*Replica { return e.reps }

// Result returns the results so far; after Run, the final ones. With a
// delivery path it is the client's view (what users saw); ServerResult is
// then the server's. Several replicas' results are merged (Result.Merge).
func (e *Engine) Result() *Result {
	if e.res != nil {
		return e.res
	}
	e.settle()
	return e.merged((*Replica).Result)
}

// ServerResult returns the server-side results: streams as the server
// emitted them. Without a delivery path it is Result.
func (e *Engine) ServerResult() *Result {
	if e.reps[0].rec.client == nil {
		return e.Result()
	}
	return e.merged((*Replica).ServerResult)
}

// merged is one replica's result of the given view, or every replica's
// merged into a new result.
func (e *Engine) merged(view func(*Replica) *Result) *Result {
	if len(e.reps) == 1 {
		return view(e.reps[0])
	}
	rs := make([]*Result, len(e.reps))
	for i, r := range e.reps {
		rs[i] = view(r)
	}
	m := mergeResults(rs)
	if e.shared != nil {
		e.shared.mergeInto(m)
	}
	return m
}

// Step processes the next event and reports whether one was processed.
func (e *Engine) Step() bool {
	if e.queue.Len() == 0 {
		e.finishRun()
		return false
	}
	ev := e.queue.pop()
	if ev.at < e.now {
		panic(fmt.Sprintf("sim: time went backwards from %d to %d", e.now, ev.at))
	}
	e.now = ev.at
	if ev.class != evSnapshot {
		e.workAt = ev.at
	}
	switch ev.class {
	case evArrival:
		e.arrive()
	case evStepStart:
		r := e.reps[ev.replica]
		if len(e.asks.aborts) > 0 {
			e.applyAborts(r)
		}
		o := r.startStep(e.now)
		e.apply(r, o)
		if o.step {
			if o.dur > Horizon-e.now {
				e.overrun(o.dur)
				return false
			}
			e.push(e.now+o.dur, evStepEnd, ev.replica)
		}
	case evStepEnd:
		r := e.reps[ev.replica]
		e.apply(r, r.endStep(e.now))
		e.push(e.now, evStepStart, ev.replica)
	case evSnapshot:
		if g := &e.groups[0]; g.snapshot(e.reps, e.arr.pending) {
			e.push(e.now.Add(g.staleness), evSnapshot, -1)
		}
	case evTransferEnd:
		e.land()
	}
	return true
}

// classOf returns the index of a request's class in the results, adding
// classes as they appear (a trace may name any) to every replica's, so
// that indexes agree across replicas; -1 for none. The lookup runs once
// per request.
func (e *Engine) classOf(name string) int16 {
	if name == "" {
		return -1
	}
	if i, ok := e.classes.index[name]; ok {
		return i
	}
	i := int16(len(e.classes.names))
	e.classes.index[name] = i
	e.classes.names = append(e.classes.names, name)
	for _, r := range e.reps {
		r.rec.addClass(name)
	}
	return i
}

// Progress is the number of requests that have ended (finished or
// rejected); safe to call from another goroutine while the engine runs.
func (e *Engine) Progress() int64 { return e.rec.progress.Load() }

// Err reports a workload source that failed while it was read (a trace
// file that changed under the run); the run then ended short.
// It also reports a run stopped at the Horizon by a step priced past it.
func (e *Engine) Err() error {
	if e.err != nil {
		return e.err
	}
	return workloads.Err(e.arr.src)
}

// overrun stops the run at a step that would end past the Horizon.
func (e *Engine) overrun(dur Time) {
	e.err = fmt.Errorf("the cost model prices a step at %.3g s at simulated time %.3g s, past the %.0f-year horizon: "+
		"its step times are out of range (check cost.roofline efficiencies and cost.linear coefficients)",
		dur.Seconds(), e.now.Seconds(), Horizon.Seconds()/(365.25*86400))
	// The streams in flight never end: the results so far are returned
	// as they are, without finishRun's checks that every stream ended.
	e.done = true
	e.res = e.Result()
}

// Run processes every event and returns the result.
// Without a delivery path or an observer, and while the process has a
// core to spare for it, ended streams are reduced on a second goroutine
// while the engine simulates on (finisher), with the same results.
func (e *Engine) Run() *Result {
	n := running.Add(1)
	defer running.Add(-1)
	// Two cores per run: a sweep whose runs already keep every core busy
	// gains nothing from the finisher and would pay for the hand-over.
	if !e.done && e.rec.fin == nil && e.async() && 2*int(n) <= runtime.GOMAXPROCS(0) {
		e.rec.fin = startFinisher()
		e.finished = true
	}
	for e.Step() {
	}
	return e.Result()
}

// running counts the engines of the process inside Run, to leave the
// finisher out when the runs have no core to spare. It decides only which
// goroutine reduces ended streams, never a result.
var running atomic.Int32

// async reports whether ended streams may be reduced off the engine's
// goroutine: not when the client's view (the delivery path) or a live
// observer reads the results as streams end.
func (e *Engine) async() bool {
	if e.rec.observer != nil {
		return false
	}
	for _, r := range e.reps {
		if r.rec.client != nil {
			return false
		}
	}
	return true
}

// settle reduces every ended stream handed to the finisher, which then
// stops: the results are whole from here on.
func (e *Engine) settle() {
	if e.rec.fin != nil {
		e.rec.fin.stop()
		e.rec.fin = nil
	}
}

func (e *Engine) finishRun() {
	if e.done {
		return
	}
	e.done = true
	e.settle()
	for i, r := range e.reps {
		r.finish(e.workAt)
		if i == 0 {
			r.rec.res.SkippedRows = workloads.SkippedRows(e.arr.src)
		}
		if r.rec.client != nil {
			r.rec.finishClient()
		}
	}
	e.res = e.merged((*Replica).Result)
}

// Check verifies every replica's invariants: every KV block is free or
// held by exactly one active request. Property tests call it between steps.
func (e *Engine) Check() error {
	for _, r := range e.reps {
		if err := r.check(); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) arrive() {
	if e.arr.reactive != nil {
		if e.now >= e.arr.at {
			e.arr.pending = false
		}
		if at, ok := e.arr.reactive.NextAt(); !ok || Time(at) > e.now || !e.arr.reactive.Next(&e.arr.next) {
			e.scheduleArrival() // a stale event: nothing is due yet
			return
		}
	} else {
		e.arr.pending = false
	}
	p := &e.arr.next
	var r *Replica
	e.arr.content = kvcache.Content{Units: p.PrefixBlocks, UnitTokens: p.PrefixBlockTokens, Prompt: p.InputTokens,
		SharedKey: p.SharedKey, SharedTokens: p.SharedTokens, Key: p.Key(), OutKey: p.OutputKey,
		Own: p.ContentKey == 0 && p.OutputKey == 0} // the seed key: unique per request ID, and IDs per run
	if i, ok := e.pinned(p.ID); ok {
		r = e.reps[i]
	} else {
		i, arm := e.groups[0].route(e.reps, p.ID, p.InputTokens, &e.arr.content)
		if arm {
			e.push(e.now.Add(e.groups[0].staleness), evSnapshot, -1)
		}
		r = e.reps[i]
	}
	q := r.alloc()
	q.arrival = Time(p.Arrival)
	q.seed = p.Seed
	q.seq.ID, q.seq.Arrival, q.seq.Priority = p.ID, p.Arrival, p.Priority
	q.seq.Prompt, q.seq.Output = p.InputTokens, p.OutputTokens
	q.seq.Content = e.arr.content
	q.class = e.classOf(p.Class)
	q.output = p.OutputTokens
	if r.id.handsOff { // a prefill replica computes the prompt and samples one token
		q.seq.Output = 1
	}
	e.apply(r, r.admit(e.now, q))
	e.scheduleArrival()
}

// apply acts on what a call into replica r produced (its outcome o): an
// ended request leaves its group's in-flight count and tells a reactive
// source, a handed-off one goes on the KV link, and a replica that must
// start a step gets its step-start event.
func (e *Engine) apply(r *Replica, o *outcome) {
	for _, id := range o.ended {
		e.groupOf(int(r.id.index)).inflight[r.id.index]--
		e.ended(id)
	}
	for i := range o.handoffs {
		e.send(r, &o.handoffs[i])
	}
	if o.start {
		e.push(e.now, evStepStart, r.id.index)
	}
}

// scheduleArrival pulls the next request from the workload and schedules
// its arrival. A reactive source (closed loop) decides its next arrival
// only when requests end, so the engine asks it again after each end.
func (e *Engine) scheduleArrival() {
	if e.arr.reactive == nil && e.arr.pending {
		return
	}
	if e.arr.reactive != nil {
		at, ok := e.arr.reactive.NextAt()
		if !ok || (e.arr.pending && Time(at) >= e.arr.at) {
			return
		}
		// An end may make a request due before the one scheduled: schedule
		// it too; the later event finds nothing due and does nothing.
		e.arr.pending, e.arr.at = true, max(Time(at), e.now)
		e.push(e.arr.at, evArrival, -1)
		return
	}
	if e.arr.src.Next(&e.arr.next) {
		e.arr.pending = true
		e.push(Time(max(e.arr.next.Arrival, e.arr.next.Ready)), evArrival, -1)
	}
}

// ended tells a reactive source that a request ended now.
func (e *Engine) ended(id int) {
	if e.arr.reactive != nil {
		e.arr.reactive.Done(id, int64(e.now))
		e.scheduleArrival()
	}
}
