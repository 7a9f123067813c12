package sim

import (
	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/specdecode"
)

// request is one active stream: the scheduler's view of it plus what the
// engine needs to time its chunks and attribute its gaps. Slots are reused
// once a request ends, gap buffer included.
type request struct {
	seq     scheduler.Seq
	arrival Time
	seed    uint64
	chunks  int
	first   Time    // first chunk
	last    Time    // latest chunk
	gaps    []int64 // ns; lives only while the stream is active

	acc        parts // the current gap's split by cause so far
	paused     bool  // preempted and not yet resumed
	pauseCause Cause
	pauseStart Time

	stalls      int
	stallTime   Time
	stallList   []Stall    // the stalls, for timelines; reused with the slot
	chunkTok    []int32    // tokens of each chunk; reused with the slot
	live        bool       // between arrival and end (a freed slot is not)
	gapCause    []uint16   // each gap's causes (see noteGapCauses); kept only with a delivery path
	gapMixed    []mixedGap // the gaps of more than one cause, in order; with a delivery path
	spec        specdecode.Stream
	specModel   *specdecode.Model // the request's class's model, or the run's; nil without speculation
	class       int16             // index into Result.ClassNames; -1 for none
	causes      uint32
	preemptions int
}

// Replica is one model instance: its scheduler, KV cache and cost model,
// and the step it is running. It is a value the engine drives; several
// replicas can share one engine's clock.
type Replica struct {
	sched *scheduler.Scheduler
	kv    *kvcache.Manager
	cost  cost.Model

	slots []*request
	free  []int

	watch      minHeap[watchEntry, *watchEntry] // failover watchdog deadlines (see watchdog.go)
	busy       bool                             // a step is running or about to start
	plan       *scheduler.Plan
	batch      cost.Batch
	decBatch   cost.Batch // the step without its prefill, for attribution
	plainBatch cost.Batch // the step as plain decodes, for speculative attribution
	draftBatch cost.Batch // the speculating sequences, for the draft model
	plainNS    Time       // the step's plain-decode time (after noise)
	extraNS    Time       // the step's speculative time beyond plain decode
	accepted   []int      // per plan entry: accepted drafts (scratch)
	inStep     parts      // a step's split for a stream decoding in it
	leftOut    parts      // a step's split for a running stream left out of it
}

// Scheduler exposes the replica's scheduler for inspection between steps.
func (r *Replica) Scheduler() *scheduler.Scheduler { return r.sched }

// KV exposes the replica's KV cache for inspection between steps.
func (r *Replica) KV() *kvcache.Manager { return r.kv }

// Active is the number of requests queued or running on the replica.
func (r *Replica) Active() int { return len(r.slots) - len(r.free) }

func (r *Replica) alloc() *request {
	if n := len(r.free); n > 0 {
		i := r.free[n-1]
		r.free = r.free[:n-1]
		return r.slots[i]
	}
	q := &request{gaps: make([]int64, 0, 64)}
	q.seq.Slot = len(r.slots)
	r.slots = append(r.slots, q)
	return q
}

func (r *Replica) release(q *request) {
	slot, gaps, stalls, tok := q.seq.Slot, q.gaps[:0], q.stallList[:0], q.chunkTok[:0]
	gc, gm := q.gapCause[:0], q.gapMixed[:0]
	*q = request{gaps: gaps, stallList: stalls, chunkTok: tok, gapCause: gc, gapMixed: gm}
	q.seq.Slot = slot
	r.free = append(r.free, slot)
}

// liveAllocs returns the KV allocations of every active request (tests).
func (r *Replica) liveAllocs() []kvcache.Alloc {
	var out []kvcache.Alloc
	inFree := make(map[int]bool, len(r.free))
	for _, i := range r.free {
		inFree[i] = true
	}
	for i, q := range r.slots {
		if !inFree[i] {
			out = append(out, q.seq.KV)
		}
	}
	return out
}
