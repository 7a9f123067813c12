package sim

import (
	"fmt"

	"github.com/itlsim/itlsim/scheduler"
)

// Driving an engine in real time (itlsim serve): a driver outside sim owns
// the engine on one goroutine, feeds requests through a reactive workload
// source as they arrive over the network, sleeps until the next pending
// event, and releases each chunk to its client as the engine emits it. The
// engine itself stays a pure function of its inputs: the driver decides
// when each request arrives (its simulated arrival time) and when to step.
//
// A cluster is served either behind the engine's router (one front door)
// or one port per replica, with a real router outside: then the driver
// pins each request to the replica whose port it came in on (Pin), and
// reads each replica's state on its own (ReplicaNow).

// Observer sees, as they happen, the chunks the engine makes visible and
// the streams that end. Its methods run inside Step, on the engine's
// goroutine; they must not call back into the engine. The engine calls it
// only when one is set (SetObserver), so a run without one pays a nil
// check per chunk.
type Observer interface {
	// Chunk reports that request id, on replica replica (its index in
	// Replicas), made tokens tokens visible at time at; last is set for
	// the chunk that completes its output.
	Chunk(replica, id int, at Time, tokens int, last bool)
	// Ended reports a stream's end (finished, rejected, or failed: aborted) on
	// replica replica with its summary; the pointer is valid only during
	// the call.
	Ended(replica int, s *StreamSummary)
}

// StepObserver is an Observer that also sees every step as it ends, for
// vLLM's engine metrics (serve's /metrics: tokens per step, preemptions,
// queue and prefill times, prefix-cache hits).
type StepObserver interface {
	Observer
	// Step reports a step of replica replica; the report and its slices
	// are valid only during the call.
	Step(replica int, s *StepReport)
}

// StepReport is one step as a StepObserver sees it.
type StepReport struct {
	Start, End Time
	// Tokens are the step's tokens as vLLM's vllm:iteration_tokens_total
	// counts them: prompt tokens computed plus tokens generated (a decode
	// generates one, and under speculation one plus the drafts accepted).
	Tokens int
	// Preempted counts the requests preempted to make room for the step.
	Preempted int
	// Prefills are the step's prompt chunks (recomputes included): the
	// request and the tokens it had computed (or found cached) before.
	Prefills []PrefillChunk
}

// PrefillChunk is one prompt chunk of a step.
type PrefillChunk struct {
	ID    int
	Start int // tokens of the request computed or cached before the chunk
}

// SetObserver makes the engine report chunks and ends to o (nil: none);
// an o that is a StepObserver sees every step too.
func (e *Engine) SetObserver(o Observer) {
	e.rec.observer = o
	e.rec.steps, _ = o.(StepObserver)
}

// reportStep tells the step observer about the step that ends at now.
func (r *Replica) reportStep(o StepObserver, plan *scheduler.Plan, now Time) {
	st := StepReport{Start: r.step.at, End: now, Preempted: len(plan.Preempted), Prefills: r.rec.stepScratch[:0]}
	for i := range plan.Entries {
		en := &plan.Entries[i]
		switch {
		case !en.Decode:
			st.Tokens += en.Tokens
			if en.Start+en.Tokens == en.Seq.Tokens() {
				st.Tokens++ // the chunk that completes the context samples a token
			}
			st.Prefills = append(st.Prefills, PrefillChunk{ID: en.Seq.ID, Start: en.Start})
		case i < len(r.step.accepted) && (r.step.extraNS > 0 || r.setup.Spec != nil):
			st.Tokens += 1 + max(0, min(r.step.accepted[i], en.Seq.Output-en.Seq.Generated-1))
		default:
			st.Tokens++
		}
	}
	r.rec.stepScratch = st.Prefills
	o.Step(int(r.id.index), &st)
}

// NextEventAt is the time of the next pending event, if one is pending. A
// real-time driver sleeps until it; with none pending it waits for an
// arrival. Step must not be called with no event pending unless the run is
// over: an empty queue ends the run.
func (e *Engine) NextEventAt() (Time, bool) {
	if e.queue.Len() == 0 {
		return 0, false
	}
	return e.queue.heap.peek().at, true
}

// Wake tells the engine that its reactive workload source has a new request
// due: it schedules an arrival at the request's time (not before Now), as it
// does after a request ends. A non-reactive source needs no waking.
func (e *Engine) Wake() { e.scheduleArrival() }

// ServerNow reports the state for live metrics, summed over the replicas:
// requests running and waiting (preempted ones included) and the share of
// KV blocks in use.
func (e *Engine) ServerNow() (running, waiting int, kvUsed float64) {
	var used, total float64
	for _, r := range e.reps {
		running += len(r.sched.Running())
		waiting += r.sched.Waiting()
		used += float64(r.kv.Used())
		total += float64(r.kv.Total())
	}
	if total > 0 {
		kvUsed = used / total
	}
	return running, waiting, kvUsed
}

// ReplicaNow is ServerNow for replica i alone (its index in Replicas), for
// a replica served on a port of its own.
func (e *Engine) ReplicaNow(i int) (running, waiting int, kvUsed float64) {
	r := e.reps[i]
	return len(r.sched.Running()), r.sched.Waiting(), r.kv.Utilization()
}

// Pin sends request id, when it arrives, to replica i (its index in
// Replicas) instead of asking the router: the request came in on that
// replica's own port, past an outside router. It counts as routed there
// (ReplicaReport.Routed) but not among the router's decisions. Pin before
// the request arrives; a pin of a request that never arrives stays held.
func (e *Engine) Pin(id, i int) error {
	if i < 0 || i >= len(e.reps) {
		return fmt.Errorf("pin request %d: replica %d, want 0..%d", id, i, len(e.reps)-1)
	}
	if e.asks.pins == nil {
		e.asks.pins = map[int]int{}
	}
	e.asks.pins[id] = i
	return nil
}

// pinned reports the replica request id is pinned to, counting it as
// routed there; one lookup per arrival, and none when nothing is pinned.
func (e *Engine) pinned(id int) (int, bool) {
	if len(e.asks.pins) == 0 {
		return 0, false
	}
	i, ok := e.asks.pins[id]
	if !ok {
		return 0, false
	}
	delete(e.asks.pins, id)
	g := e.groupOf(i)
	g.inflight[i]++
	g.routed[i]++
	return i, true
}

// Abort asks the engine to end request id, as vLLM aborts a request
// whose client disconnected: at the replica's next step start (between
// steps, where every running stream's time is accounted for) the request
// leaves the queue or the batch and its blocks are freed. It ends failed
// (StatusFailed) with the chunks it made visible before, as the client
// saw it: the silence it ended in is no gap of its stream, and it counts
// in no per-stream figure. why says why (serve: "cancelled" when the
// client went away, "write-timeout" or "drain" when the server cut it);
// Result.Aborted counts the aborts by it, and the timeline sink hears it
// (Timeline.Abort). A request that has not arrived, has already ended, or
// ends before then is left alone. An engine driven live has no delivery
// path (serve's real network replaces it).
func (e *Engine) Abort(id int, why string) { e.asks.aborts = append(e.asks.aborts, abortAsk{id, why}) }

// liveAsks are what a live driver asked of the run and the engine has not
// yet done: aborts, applied at the replica's next step start, and pins of
// requests to replicas, applied when they arrive.
type liveAsks struct {
	aborts []abortAsk
	pins   map[int]int // request id → the replica it goes to, bypassing the router
}

// abortAsk is one Abort not yet applied.
type abortAsk struct {
	id  int
	why string
}

// applyAborts ends, at r's step start, the requested aborts of requests r
// holds; an abort of a request no replica holds (not arrived, ended) is
// dropped, one another replica holds waits for that replica's next step
// start. Each id is looked up among the active requests: once per abort
// and step start, not per token.
func (e *Engine) applyAborts(r *Replica) {
	o := r.begin(e.now)
	keep := e.asks.aborts[:0]
	for _, a := range e.asks.aborts {
		if q := liveRequest(r, a.id); q != nil {
			r.abort(q, a.why)
			continue
		}
		for _, o := range e.reps {
			if o != r && liveRequest(o, a.id) != nil {
				keep = append(keep, a)
				break
			}
		}
	}
	e.asks.aborts = keep
	e.apply(r, o)
}

// abort ends q as Engine.Abort asked, for why: it leaves the scheduler and
// ends failed with the chunks it showed (recorder.abort).
func (r *Replica) abort(q *request, why string) {
	r.sched.Abort(&q.seq)
	q.paused = false
	if r.rec.res.Aborted == nil {
		r.rec.res.Aborted = map[string]int{}
	}
	r.rec.res.Aborted[why]++
	id := q.seq.ID
	r.rec.endAs(r.now, q, 0, why)
	r.release(q)
	r.ended(id)
}

func liveRequest(r *Replica, id int) *request {
	for _, q := range r.slots {
		if q.live && q.seq.ID == id {
			return q
		}
	}
	return nil
}
