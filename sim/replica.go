package sim

import (
	"fmt"
	"slices"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/sim/jitter"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads/seed"
)

// request is one active stream: the scheduler's view of it plus what the
// engine needs to time its chunks and attribute its gaps. Slots are reused
// once a request ends, gap buffer included.
type request struct {
	// The fields read or written for every token come first, on the cache
	// line before the scheduler's hot fields: a cluster keeps thousands of
	// streams active, and their per-token state must stay dense.
	last       Time    // latest chunk
	gaps       []int64 // ns, but for the open run (runFrom); lives only while the stream is active
	chunks     int
	runFrom    int64 // the replica's step index of the first gap of the open run: gaps that were whole steps
	runLen     int32 // gaps in the open run; 0 when none is open
	class      int16 // index into Result.ClassNames; -1 for none
	paused     bool  // preempted and not yet resumed
	dirty      bool  // acc holds parts of the open gap (else the gap is so far the steps it was in)
	multi      bool  // some chunk had more than one token: chunkTok holds every chunk's (a flag here, so a token never reads chunkTok's line)
	live       bool  // between arrival and end (a freed slot is not)
	pauseCause Cause
	causes     uint32 // the causes of its stalls, a bit each
	seq        scheduler.Seq
	specModel  *specdecode.Model // the request's class's model, or the run's; nil without speculation
	first      Time              // first chunk
	chunkTok   []int32           // tokens of each chunk once one had more than one (see tokensOf); reused with the slot
	acc        parts             // the current gap's split by cause so far

	arrival     Time
	seed        uint64
	pauseStart  Time
	stalls      int
	stallTime   Time
	preemptions int
	stallList   []Stall            // the stalls, for timelines; reused with the slot
	gapCause    []uint16           // each gap's causes (see noteGapCauses); kept only with a delivery path
	gapMixed    []mixedGap         // the gaps of more than one cause, in order; with a delivery path
	spec        *specdecode.Stream // the speculation state while specModel is set; kept with the slot
	output      int                // the request's output tokens (a prefill replica's Seq asks for one)
}

// Replica is one model instance: its scheduler, KV cache and cost model,
// its own noise and hiccup streams, its failover watchdog, the step it is
// running and the recorder of the streams it serves. It is a value the
// engine drives on the engine's clock: the engine hands it arrivals and
// step boundaries (with the time), it prices and ends its own steps, and
// each call returns what happened that the engine acts on (outcome).
// Several replicas share one engine; every event names its replica.
type Replica struct {
	id     replicaID
	setup  *Setup // the replica's resolved configuration (its pool's)
	now    Time   // the engine's clock during a call from the engine
	sched  *scheduler.Scheduler
	kv     *kvcache.Manager
	cost   cost.Model
	jitter jitter.Jitter // server-side step noise, hiccups and scale
	// counter counts the steps' work (Setup.Work); nil when nothing
	// can. draftCounter is the draft model's.
	counter, draftCounter cost.Counter

	slots []*request // every slot, active or free; a request's seq.Slot indexes it
	free  []int      // the free slots' indexes

	rec      recorder                               // the replica's results
	out      outcome                                // what the call from the engine produced
	onReject func(*scheduler.Seq, scheduler.Reason) // r.rejectWaiting, bound once

	watch      watchdog // the failover watchdog when it aborts primaries (watchdog.go)
	busy       bool     // a step is running or about to start
	step       step     // the step running or last run
	plainRun   int64    // tokens wholeSteps took (tests hold it to the reference step)
	speculates bool     // some request may speculate (Setup.Spec or a class's): else no token reads request.specModel, off the request's hot line
}

// replicaID names a replica and its part in the cluster.
type replicaID struct {
	index int32
	name  string // "replica-0", or the pool's name and index
	pool  string // the pool's name; "" outside a cluster with pools
	role  string // "" (mixed), RolePrefill or RoleDecode
	// handsOff is set on a prefill replica: a request leaves it, handed
	// off to the KV link, once its prompt is computed and its first token
	// sampled (disagg.go).
	handsOff bool
}

// step is a replica's step: its plan, the batches it was priced as, and
// its time split by cause, for a stream in the step and for one left out
// of it (priceStep). Its buffers are reused from step to step.
type step struct {
	at       Time // the step's start
	plan     *scheduler.Plan
	batch    cost.Batch
	decode   cost.Batch // the step without its prefill, for attribution
	plain    cost.Batch // the step as plain decodes, for speculative attribution
	draft    cost.Batch // the speculating sequences, for the draft model
	plainNS  Time       // the step's plain-decode time (after noise)
	extraNS  Time       // the step's speculative time beyond plain decode
	accepted []int      // per plan entry: accepted drafts
	inStep   parts      // a step's split for a stream decoding in it, but for its decode and rejected shares
	common   parts      // inStep with the decode share of a stream that did not speculate in a step without speculation
	own      parts      // a speculating step's split for one stream (scratch)
	leftOut  parts      // a step's split for a running stream left out of it
}

// outcome is what one call from the engine into a replica produced that
// the engine acts on, as raft's Ready hands its caller what a step
// produced: the replica changes only itself, and the engine applies the
// rest to the cluster (Engine.apply). Each call starts it afresh (begin);
// its slices are reused, so a step allocates nothing for it.
type outcome struct {
	start bool // an idle replica queued a request: its step starts now (admit, takeOver)
	step  bool // startStep formed a step, of dur
	dur   Time
	// ended are the requests that ended (finished, rejected, cancelled or
	// aborted), in order; handoffs the requests a prefill replica hands to
	// the KV link. No call produces both: a prefill replica's streams leave
	// it handed off, and it ends only the requests it rejects, which it
	// does when a request arrives or a step starts, never as a step ends.
	ended    []int
	handoffs []handoff
}

// begin starts a call from the engine at now: it returns the replica's
// outcome, cleared.
func (r *Replica) begin(now Time) *outcome {
	r.now = now
	r.out = outcome{ended: r.out.ended[:0], handoffs: r.out.handoffs[:0]}
	return &r.out
}

// newReplica builds replica index of a run seeded runSeed from its
// resolved setup s. Its noise and hiccups are the streams "step-noise" and
// "hiccups" under the replica's seed, the run seed's child
// "replica/<index>" (see package seed): a plain run is replica 0, so a
// one-replica cluster draws exactly what the plain run draws, and adding
// replicas never shifts an existing replica's draws.
func newReplica(index int, name, pool string, s *Setup, runSeed uint64, rec recorder) (*Replica, error) {
	rec.replica = index
	c := &s.Config
	kv, err := kvcache.New(s.Blocks, c.KVCache.BlockSize, s.SwapBlocks)
	if err != nil {
		return nil, err
	}
	if c.KVCache.EnablePrefixCaching {
		kv.EnablePrefixCaching()
	}
	for _, t := range s.Tiers {
		if err := kv.AddTier(t.Name, t.Blocks, t.Swap); err != nil {
			return nil, err
		}
	}
	sc := c.Scheduler
	if s.DP > 1 { // one scheduler stands for the lockstep data-parallel ranks
		sc.MaxNumSeqs *= s.DP
		sc.MaxNumBatchedTokens *= s.DP
	}
	sched, err := scheduler.New(sc, kv, c.MaxModelLen)
	if err != nil {
		return nil, err
	}
	r := &Replica{id: replicaID{index: int32(index), name: name, pool: pool}, setup: s, sched: sched, kv: kv, cost: s.Cost, rec: rec}
	if s.Work != nil {
		r.counter = s.Work
		r.draftCounter, _ = s.DraftCost.(cost.Counter)
	}
	r.speculates = s.Spec != nil || slices.ContainsFunc(s.ClassSpec, func(m *specdecode.Model) bool { return m != nil })
	r.onReject = r.rejectWaiting
	r.jitter = jitter.New(jitter.Config{NoiseCV: c.Cost.NoiseCV, HiccupRatePerS: c.Cost.HiccupRatePerS, HiccupMS: c.Cost.HiccupMS,
		StepTimeScale: c.Cost.StepTimeScale}, seed.Derive(runSeed, "replica", index))
	return r, nil
}

// startSpec sets q's speculation model, its class's or the replica's, and
// starts its state in the slot's buffer (allocated with the slot's first
// speculating request); nil without speculation.
func (r *Replica) startSpec(q *request) {
	q.specModel = r.setup.Spec
	if q.class >= 0 && int(q.class) < len(r.setup.ClassSpec) && r.setup.ClassSpec[q.class] != nil {
		q.specModel = r.setup.ClassSpec[q.class]
	}
	if q.specModel == nil {
		return
	}
	if q.spec == nil {
		q.spec = new(specdecode.Stream)
	}
	q.specModel.Start(q.spec, q.seed, q.seq.Output)
}

// Scheduler exposes the replica's scheduler for inspection between steps.
func (r *Replica) Scheduler() *scheduler.Scheduler { return r.sched }

// KV exposes the replica's KV cache for inspection between steps.
func (r *Replica) KV() *kvcache.Manager { return r.kv }

// Name is the replica's name: "replica-I", or "POOL-I" in a cluster of pools.
func (r *Replica) Name() string { return r.id.name }

// Pool is the name of the replica's pool ("" without pools).
func (r *Replica) Pool() string { return r.id.pool }

// Setup is the replica's resolved configuration.
func (r *Replica) Setup() *Setup { return r.setup }

// Result is the replica's results so far (the client's view with a
// delivery path); ServerResult the server's.
func (r *Replica) Result() *Result { return r.rec.result() }

// ServerResult is the replica's server-side results so far.
func (r *Replica) ServerResult() *Result { return r.rec.res }

// Active is the number of requests queued or running on the replica.
func (r *Replica) Active() int { return len(r.slots) - len(r.free) }

func (r *Replica) alloc() *request {
	if n := len(r.free); n > 0 {
		i := r.free[n-1]
		r.free = r.free[:n-1]
		return r.slots[i]
	}
	// A slot of an ended run of the same search or sweep keeps the
	// buffers its streams grew (docs/benchmarks-log.md, 2026-12-06).
	q := r.rec.spares.takeRequest()
	if q == nil {
		q = &request{gaps: make([]int64, 0, 64)}
	}
	q.seq.Slot = len(r.slots)
	r.slots = append(r.slots, q)
	return q
}

func (r *Replica) release(q *request) {
	slot, gaps, stalls, tok := q.seq.Slot, q.gaps[:0], q.stallList[:0], q.chunkTok[:0]
	gc, gm, kv := q.gapCause[:0], q.gapMixed[:0], q.seq.KV.Recycle()
	*q = request{gaps: gaps, stallList: stalls, chunkTok: tok, gapCause: gc, gapMixed: gm, spec: q.spec}
	q.seq.Slot, q.seq.KV = slot, kv
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

// check verifies the replica's invariants: every KV block is free or held
// by exactly one active request, and every computed token has a block.
func (r *Replica) check() error {
	if err := r.kv.Check(r.liveAllocs()); err != nil {
		return err
	}
	bs := r.kv.BlockSize()
	for _, s := range r.sched.Running() {
		if (s.KV.Blocks+s.KV.SharedBlocks)*bs < s.Computed {
			return fmt.Errorf("sim: %s: request %d holds %d blocks for %d computed tokens", r.id.name, s.ID, s.KV.Blocks+s.KV.SharedBlocks, s.Computed)
		}
	}
	if r.step.plan != nil {
		for _, en := range r.step.plan.Entries {
			if (en.Seq.KV.Blocks+en.Seq.KV.SharedBlocks)*bs < en.Start+en.Tokens {
				return fmt.Errorf("sim: %s: request %d computes up to token %d with %d blocks", r.id.name, en.Seq.ID, en.Start+en.Tokens, en.Seq.KV.Blocks+en.Seq.KV.SharedBlocks)
			}
		}
	}
	return nil
}

// admit queues the request in q, which the engine filled from the
// workload; the outcome says whether the replica must start a step now (it
// was idle). A request the scheduler refuses ends here as rejected.
func (r *Replica) admit(now Time, q *request) *outcome {
	o := r.begin(now)
	r.startSpec(q)
	r.rec.res.Requests++
	q.live = true
	if d := r.sched.Arrive(int64(now), &q.seq); d.Verdict == scheduler.Reject {
		r.reject(q, d.Reason)
		return o
	}
	if r.watch.ns > 0 {
		r.watchRequest(q)
	}
	o.start = !r.busy
	r.busy = true
	return o
}

func (r *Replica) rejectWaiting(s *scheduler.Seq, why scheduler.Reason) {
	r.reject(r.slots[s.Slot], why)
}

func (r *Replica) reject(q *request, why scheduler.Reason) {
	id := q.seq.ID
	r.rec.reject(q, why)
	r.release(q)
	r.ended(id)
}

// ended notes that request id ended: the observer hears it now, with the
// summary its end appended last, and the engine through the outcome.
func (r *Replica) ended(id int) {
	if o := r.rec.observer; o != nil {
		o.Ended(int(r.id.index), r.rec.res.Streams.Last())
	}
	r.out.ended = append(r.out.ended, id)
}

// startStep forms and prices the replica's next step at now. The outcome
// holds the step's duration, or step false when there is nothing to run
// (the replica goes idle until an arrival).
func (r *Replica) startStep(now Time) *outcome {
	o := r.begin(now)
	r.step.at = now
	if r.watch.ns > 0 {
		r.checkWatchdog()
	}
	if r.setup.Spec != nil {
		r.chooseDrafts()
	}
	plan := r.sched.Schedule(int64(now), r.onReject)
	if plan.Empty() {
		r.busy = false
		return o
	}
	r.step.plan = plan
	dur := r.priceStep(plan)
	res := r.rec.res
	r.notePreemptions(plan, res.Series.bucket(now))
	// The step's gauges are charged to every bucket it spans, in
	// proportion, so a bucket's mean never exceeds the state it held.
	res.Series.spread(now, dur, float64(len(r.sched.Running())), float64(r.sched.Waiting()), float64(r.sched.Preempted()), r.kv.Utilization())
	bk := res.Series.bucket(now)
	bk.Steps++
	bk.BatchTokens += r.step.batch.Tokens()
	res.Steps++
	o.step, o.dur = true, dur
	return o
}

// priceStep prices the plan's step and prepares its attribution: the time
// a stream in the step is charged by cause (inStep, with the plain-decode
// and speculative parts apart, split per stream at the step's end) and the
// time a running stream left out of it is charged (leftOut). It returns the
// step's duration.
func (r *Replica) priceStep(plan *scheduler.Plan) Time {
	b := &r.step.batch
	b.Reset()
	maxK := plan.MaxDrafts
	if r.rec.reference {
		// Every entry read one by one.
		maxK = 0
		for i := range plan.Entries {
			if en := &plan.Entries[i]; en.Decode {
				b.AddVerify(en.Start+1, en.Tokens)
				maxK = max(maxK, en.Tokens-1)
			} else {
				b.AddPrefill(en.Start, en.Tokens)
			}
		}
	} else {
		// The decodes' terms are the plan's sums (AddVerify's, entry by
		// entry); only prefill chunks are read one by one. Reading every
		// entry instead took about 5 % of BenchmarkChatWorkload's CPU time
		// (startStep's share of its profile, 0.51 s of 1.49 s against
		// 0.59 s of 1.59 s), and 1.06x and 1.05x its medians on
		// BenchmarkChatWorkload and BenchmarkStep in six paired rounds
		// (docs/benchmarks-log.md, 2026-12-03).
		b.DecodeSeqs, b.DecodeContext = plan.DecodeSeqs, plan.DecodeContext
		b.DecodeExtraTokens, b.DecodeExtraPairs = plan.DecodeDrafts, plan.DraftContext
		if plan.PrefillTokens > 0 {
			for i := range plan.Entries {
				if en := &plan.Entries[i]; !en.Decode {
					b.AddPrefill(en.Start, en.Tokens)
				}
			}
		}
	}
	// A step's time splits into plain decode work, speculative work beyond
	// it (drafting and the verified draft positions), and prefill work.
	verify := Time(r.cost.StepNS(b))
	if r.counter != nil {
		w := r.counter.StepWork(b)
		r.rec.res.Work.FLOPs += w.FLOPs
		r.rec.res.Work.Bytes += w.Bytes
	}
	decSpec := verify
	if b.PrefillTokens > 0 {
		decSpec = 0
		if b.DecodeSeqs > 0 {
			r.step.decode = b.DecodeOnly()
			decSpec = min(verify, Time(r.cost.StepNS(&r.step.decode)))
		}
	}
	plain := decSpec
	var draft Time
	if maxK > 0 {
		r.step.plain = b.PlainDecode()
		plain = min(decSpec, Time(r.cost.StepNS(&r.step.plain)))
		draft = r.draftTime(plan, maxK)
		r.rec.res.Spec.DraftTime += draft
	}
	full := verify + draft
	extra := decSpec - plain + draft
	if f, ok := r.jitter.Factor(); ok {
		full = max(1, Time(float64(full)*f+0.5))
		plain = min(full, Time(float64(plain)*f+0.5))
		extra = min(full-plain, Time(float64(extra)*f+0.5))
	}
	hiccup := Time(r.jitter.Hiccup(int64(r.now)))
	var swap, load Time
	if blocks := plan.SwapOutBlocks + plan.SwapInBlocks; blocks > 0 {
		bytes := int64(blocks) * r.setup.BlockBytes
		r.rec.res.SwapBytes += bytes
		if ts := r.setup.Tiers; len(ts) > 0 && ts[0].Swap {
			// Swap space is the cpu tier: out at its write, in at its read bandwidth.
			bb := float64(r.setup.BlockBytes)
			swap = Time(float64(plan.SwapOutBlocks)*bb/ts[0].WriteBW*1e9 + float64(plan.SwapInBlocks)*bb/ts[0].ReadBW*1e9 + 0.5)
		} else {
			swap = Time(float64(bytes)/r.setup.HostBW*1e9 + 0.5)
		}
	}
	for t := range r.setup.Tiers {
		// Prefix blocks loaded from an offload tier before the step: the
		// step waits for them, as it does for a prompt's compute.
		if n := plan.TierLoads[t]; n > 0 {
			bytes := int64(n) * r.setup.BlockBytes
			r.rec.res.TierLoadBytes += bytes
			load += Time(float64(bytes)/r.setup.Tiers[t].ReadBW*1e9 + 0.5)
		}
	}
	full += load
	dur := swap + full + hiccup
	r.step.plainNS, r.step.extraNS = plain, extra
	r.step.inStep = parts{}
	r.step.inStep[CausePrefillInterference] = full - plain - extra
	r.step.inStep[CauseKVSwap] = swap
	r.step.inStep[CauseEngineHiccup] = hiccup
	r.step.common = r.step.inStep
	r.step.common[CauseDecode] = plain + extra
	r.step.leftOut = parts{}
	if b.PrefillTokens > 0 {
		r.step.leftOut[CausePrefillInterference] = full
	} else {
		r.step.leftOut[CauseBatchFull] = full
	}
	r.step.leftOut[CauseKVSwap] = swap
	r.step.leftOut[CauseEngineHiccup] = hiccup
	return dur
}

// notePreemptions counts the plan's preemptions and starts (or, for a
// stream swapped back in, ends) the pause each stream's next gap will be
// charged for.
func (r *Replica) notePreemptions(plan *scheduler.Plan, bk *Bucket) {
	res := r.rec.res
	res.PreemptPause += plan.PauseStarts
	for _, p := range plan.Preempted {
		q := r.slots[p.Seq.Slot]
		q.preemptions++
		bk.Preemptions++
		if p.Mode == scheduler.Swap {
			res.PreemptSwap++
		} else {
			res.PreemptRecompute++
		}
		if !q.paused {
			q.paused, q.pauseStart = true, r.now
			q.pauseCause = CauseKVRecompute
			if p.Mode == scheduler.Swap {
				q.pauseCause = CauseKVSwap
			}
		}
	}
	for _, s := range plan.SwappedIn {
		q := r.slots[s.Slot]
		if q.paused && q.pauseCause == CauseKVSwap {
			q.acc[CauseKVSwap] += r.now - q.pauseStart
			q.paused, q.dirty = false, true
		}
	}
}

// endStep, at now, makes the step's tokens visible and attributes the
// step's time to every running stream. The engine starts the next step.
func (r *Replica) endStep(now Time) *outcome {
	o := r.begin(now)
	plan := r.step.plan
	r.step.plan = nil
	spec := r.setup.Spec
	// Draw every verification's outcome first: a stream that did not
	// speculate is charged the step's overall rejected share.
	var drafted, rejected int
	if r.step.extraNS > 0 || spec != nil {
		r.step.accepted = r.step.accepted[:0]
		for i := range plan.Entries {
			en := &plan.Entries[i]
			a := 0
			if k := en.Tokens - 1; en.Decode && k > 0 {
				qq := r.slots[en.Slot]
				a = qq.specModel.Draw(qq.spec, k)
				drafted += k
				rejected += k - a
			}
			r.step.accepted = append(r.step.accepted, a)
		}
	}
	// A stream whose open gap is exactly this step (it was in the previous
	// one too and has nothing else to account) needs no split of its own:
	// its gap's parts are the step's, checked once here, and its
	// chunks are counted per step (recorder.flushStep).
	if o := r.rec.steps; o != nil {
		r.reportStep(o, plan, now)
	}
	dur := now - r.step.at
	if t := r.step.common.sum(); t != dur {
		panic(fmt.Sprintf("sim: %s: a step of %d ns whose parts sum to %d ns (%v)", r.id.name, dur, t, r.step.common))
	}
	if r.rec.reference {
		// The straightforward step: every stream's share of the step is
		// added to its gap's parts and every gap recorded as it closes.
		r.endEntries(plan, now, false, false, drafted, rejected)
	} else {
		r.logStep(dur)
		fastOK := r.watch.ns == 0
		// A whole-step token needs recorder.chunk only to see a stall (the
		// step was one), speculation, a handoff, an observer or a client view.
		whole := fastOK && dur <= r.rec.stall && !r.speculates && !r.id.handsOff && r.rec.observer == nil && r.rec.client == nil
		r.endEntries(plan, now, fastOK, whole, drafted, rejected)
		r.rec.flushStep(now, dur)
	}
	// Every running stream the step left out is charged its share.
	var paused parts
	if len(plan.Paused) > 0 {
		// A stream that could not grow waited for blocks, whatever the
		// step ran: its compute share is kv-pause.
		paused = r.step.leftOut
		paused[CauseKVPause] = paused[CausePrefillInterference] + paused[CauseBatchFull]
		paused[CausePrefillInterference], paused[CauseBatchFull] = 0, 0
	}
	for _, s := range r.sched.Running() {
		if s.Sched == 0 {
			if q := r.slots[s.Slot]; !q.paused {
				if s.Paused {
					q.acc.add(&paused)
				} else {
					q.acc.add(&r.step.leftOut)
				}
				q.dirty = true
			}
		}
	}
	return o
}

// wholeSteps makes visible, from entries[i] on, the tokens most of a run
// is made of, and returns the index of the first entry it leaves
// (len(entries) when none): a decode of a stream that was in the step
// before and has nothing to account but the step, whose token is not its
// last and fills no KV block, and whose run of whole-step gaps ends at the
// step before. It does what endEntries' general case and recorder.chunk
// do for such a token, in a loop without a call and with the fields it
// reads in locals (a call, or a store through a pointer, would have the
// compiler load them again for every entry); endEntries takes every other
// entry. With the loop off, CPU time was 1.06x (the geometric mean of
// the medians of six rounds; docs/benchmarks-log.md, 2026-12-03):
// 1.04x on BenchmarkChatWorkload (1.00-1.07), 1.06x on
// BenchmarkChatCluster16/round-robin (0.98-1.12), 1.10x on
// BenchmarkSharedPrefixCluster16 (0.95-1.14), 1.06x on
// BenchmarkChatDisagg16 (0.94-1.09), 1.05x on BenchmarkStep (0.99-1.13).
func (r *Replica) wholeSteps(entries []scheduler.Entry, i int, now Time) int {
	slots, stepAt, kv, st := r.slots, r.step.at, r.kv, &r.rec.step
	pos := &st.pos
	cur := r.rec.logBase + int64(len(r.rec.log)) - 1 // the step just logged: the runs end at it
	from := i
	for ; uint(i) < uint(len(entries)); i++ { // unsigned: the compiler then drops entries[i]'s bounds check
		en := &entries[i]
		q := slots[en.Slot]
		seq := en.Seq
		c, g := seq.Computed+1, seq.Generated
		if q.paused || !en.Decode || en.Tokens != 1 || q.dirty || q.chunks <= 0 || q.last != stepAt ||
			c != seq.Prompt+g || g+1 >= seq.Output || q.multi || q.class >= 0 ||
			q.runLen == 0 || q.runFrom+int64(q.runLen) != cur || kv.Registers(&seq.KV, c) {
			break
		}
		seq.Computed, seq.Generated = c, g+1 // Advance(1), which sampled
		q.chunks++
		q.runLen++
		pos[positionOf(g)]++
		q.last = now
	}
	n := uint64(i - from)
	st.total += n
	st.tokens += n
	r.plainRun += int64(n)
	return i
}

// endEntries makes each entry's tokens visible and charges its stream its
// share of the step (endStep); drafted and rejected are the step's
// verified and rejected drafts. With fastOK (no watchdog), a gap that is
// exactly the step takes the step's split instead of accumulating its
// own; with whole, wholeSteps takes the tokens it can.
func (r *Replica) endEntries(plan *scheduler.Plan, now Time, fastOK, whole bool, drafted, rejected int) {
	entries := plan.Entries
	for i := 0; i < len(entries); i++ {
		if whole {
			if i = r.wholeSteps(entries, i, now); i == len(entries) {
				break
			}
		}
		en := &entries[i]
		q := r.slots[en.Slot]
		k := 0
		if en.Decode {
			k = en.Tokens - 1
		}
		if q.paused && q.pauseCause == CauseKVTransfer { // its first step here ends the handoff
			q.acc[CauseKVTransfer] += r.step.at - q.pauseStart
			q.paused, q.dirty = false, true
		}
		var split *parts // the gap's parts when this step is the whole gap
		if !q.paused {
			p := &r.step.common
			if r.step.extraNS > 0 {
				var rej Time
				switch {
				case k > 0:
					rej = Time(float64(r.step.extraNS)*float64(k-r.step.accepted[i])/float64(k) + 0.5)
				case drafted > 0:
					rej = Time(float64(r.step.extraNS)*float64(rejected)/float64(drafted) + 0.5)
				}
				p = &r.step.own
				*p = r.step.inStep
				p[CauseDecode] = r.step.plainNS + r.step.extraNS - rej
				p[CauseSpecRejection] = rej
			}
			// A gap that is the step takes the step's split, and its chunk
			// is counted per step (recorder.chunk): with every gap
			// accumulating its own instead, CPU time was 2.8-4.3x on the
			// five benchmarks of docs/benchmarks-log.md (2026-12-03).
			if fastOK && en.Decode && !q.dirty && q.chunks > 0 && q.last == r.step.at {
				split = p
			} else {
				q.acc.add(p)
				q.dirty = true
			}
		}
		if r.watch.ns > 0 {
			if d := r.deadline(q); now > d {
				// The watchdog fired during the step: the stream is aborted
				// before its tokens are seen.
				r.cancel(q, d)
				continue
			}
		}
		if k > 0 {
			a := r.step.accepted[i]
			reg := min(SpecRegions-1, SpecRegions*en.Seq.Generated/max(en.Seq.Output, 1))
			n := en.Seq.Verify(a)
			r.kv.Shrink(&en.Seq.KV, en.Seq.Computed)
			r.kv.RegisterPrefix(&en.Seq.KV, &en.Seq.Content, en.Seq.Computed)
			st := &r.rec.res.Spec
			st.Steps++
			st.Drafted += int64(k)
			st.Accepted += int64(n - 1)
			if a > n-1 { // the response ended inside the accepted drafts: none was rejected
				st.Verified += int64(n - 1)
			} else {
				st.Verified += int64(min(k, n))
			}
			st.RegionDrafted[reg] += int64(k)
			st.RegionAccepted[reg] += int64(n - 1)
			st.Emitted += int64(n)
			for j := range k {
				st.Drafts[j]++
				if j < n-1 {
					st.ByPosition[j]++
				}
			}
			st.DecodeEntries++
			st.DecodeTokens += int64(n)
			q.specModel.Record(q.spec, k, n-1, n)
			r.emit(q, n, split)
		} else {
			sampled := en.Seq.Advance(en.Tokens)
			r.kv.RegisterPrefix(&en.Seq.KV, &en.Seq.Content, en.Seq.Computed) // before a finish frees the blocks
			if sampled {
				r.sampled(q, en, split)
			}
		}
	}
}

// logStep appends the step's duration to the recorder's step log, from
// which the streams that were in every step take their gaps (recorder.runs).
// When the log is full, the steps no open run needs are dropped first, and
// it grows when that frees less than half: the log spans the longest open
// run, so it grows with the active streams, not with the run's length.
func (r *Replica) logStep(dur Time) {
	rc := &r.rec
	if len(rc.log) == cap(rc.log) && len(rc.log) > 0 {
		keep := rc.logBase + int64(len(rc.log))
		for _, q := range r.slots {
			if q.runLen > 0 {
				keep = min(keep, q.runFrom)
			}
		}
		n := int(keep - rc.logBase)
		rc.log = rc.log[:copy(rc.log, rc.log[n:])]
		rc.logBase = keep
		if 2*len(rc.log) > cap(rc.log) {
			rc.log = slices.Grow(rc.log, cap(rc.log))
		}
	}
	rc.log = append(rc.log, int64(dur))
}

// sampled makes the one token a plain step sampled visible.
func (r *Replica) sampled(q *request, en *scheduler.Entry, split *parts) {
	if r.speculates && q.specModel != nil {
		if en.Decode {
			r.rec.res.Spec.DecodeEntries++
			r.rec.res.Spec.DecodeTokens++
		}
		q.specModel.Record(q.spec, 0, 0, 1)
	}
	r.emit(q, 1, split)
}

// emit makes a chunk of n tokens visible now; a stream that produced its
// last token finishes. split is the gap's parts when the step just ended
// is the whole gap (see recorder.chunk), else nil.
func (r *Replica) emit(q *request, n int, split *parts) {
	if r.id.handsOff {
		r.sched.Finish(&q.seq)
		r.handOff(q)
		r.release(q)
		return
	}
	if r.rec.chunk(r.now, q, n, split) {
		r.sched.Finish(&q.seq)
		r.rec.res.Finished++
		r.end(q, 0)
	}
}

// end reduces a stream that finished, or was cancelled at cancelAt (the
// watchdog aborted it), to its summary and frees its slot.
func (r *Replica) end(q *request, cancelAt Time) {
	id := q.seq.ID
	r.rec.end(r.now, q, cancelAt)
	r.release(q)
	r.ended(id)
}

// chooseDrafts sets, for every running decoding sequence, how many tokens
// it drafts this step: k while its stream still speculates (fallback) and
// the batch is not above disable_by_batch_size, never past its last token.
func (r *Replica) chooseDrafts() {
	cfg := r.setup.Config.SpecDecode
	running := r.sched.Running()
	off := cfg.DisableByBatchSize > 0 && len(running) > cfg.DisableByBatchSize
	for _, s := range running {
		s.Spec = 0
		if off || !s.Decoding() {
			continue
		}
		if q := r.slots[s.Slot]; q.specModel.Active(q.spec) {
			s.Spec = max(0, min(cfg.K, s.Output-s.Generated-1))
		}
	}
}

// draftTime is how long the proposer takes to draft for the step's
// speculating sequences: maxK sequential steps of the draft model over
// them, or the cheap proposer's cost.
func (r *Replica) draftTime(plan *scheduler.Plan, maxK int) Time {
	if r.setup.DraftCost == nil {
		return Time(r.setup.Config.SpecDecode.ProposerNS(maxK))
	}
	db := &r.step.draft
	db.Reset()
	for i := range plan.Entries {
		if en := &plan.Entries[i]; en.Decode && en.Tokens > 1 {
			db.AddDecode(en.Start + 1)
		}
	}
	if r.draftCounter != nil {
		w := r.draftCounter.StepWork(db)
		r.rec.res.Work.FLOPs += float64(maxK) * w.FLOPs
		r.rec.res.Work.Bytes += float64(maxK) * w.Bytes
	}
	return Time(maxK) * Time(r.setup.DraftCost.StepNS(db))
}

// finish closes the replica's results at the end of the run (now).
func (r *Replica) finish(now Time) {
	res := r.rec.res
	res.Duration = now
	res.Series.settle()
	res.Work.SpanNS = now
	res.Work.BusyNS = 0
	for i := range res.Series.Buckets {
		res.Work.BusyNS += res.Series.Buckets[i].BusyNS
	}
	if r.counter != nil {
		p, s := r.counter.Peak(), now.Seconds()
		res.Work.PeakFLOPs, res.Work.PeakBytes = p.FLOPs*s, p.Bytes*s
	}
	res.PrefixQueried, res.PrefixHits, res.PrefixEvictions = r.kv.PrefixStats()
	if r.kv.Tiers() > 0 {
		res.Tiers = res.Tiers[:0]
		for _, t := range r.kv.TierStats() {
			res.Tiers = append(res.Tiers, TierResult{Name: t.Name, HitTokens: t.HitTokens, LoadedBlocks: t.Loaded, StoredBlocks: t.Stored, DroppedBlocks: t.Dropped, SkippedBlocks: t.Skipped})
		}
	}
	res.RecomputeTokens, res.RecomputeCached = r.sched.RecomputeStats()
	if n := r.Active(); n != 0 {
		panic(fmt.Sprintf("sim: %s: run ended with %d requests neither finished nor rejected", r.id.name, n))
	}
	if r.kv.Free() != r.kv.Total() || r.kv.SwapFree() != r.kv.SwapTotal() {
		panic("sim: run ended with KV blocks still allocated")
	}
}
