package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/quantile"
	"github.com/itlsim/itlsim/workloads"
)

// Engine runs one simulation: a clock, an event queue, the workload and the
// replica it feeds. Build it with New, then call Run, or Step repeatedly to
// inspect the state between events.
type Engine struct {
	setup *Setup
	now   Time
	queue eventQueue
	seq   uint64

	src     workloads.Source
	pending workloads.Request
	rep     *Replica   // the replica requests go to (a router chooses among reps later)
	reps    []*Replica // every replica on this clock; events name theirs by index
	res     *Result

	stall      Time
	watchNS    Time // the failover watchdog when it aborts primaries; 0 off
	noise      *rand.Rand
	noiseMu    float64
	noiseSigma float64
	hiccups    *rand.Rand
	hiccupNS   Time
	nextHiccup Time
	onReject   func(*scheduler.Seq, scheduler.Reason)
	done       bool

	classIndex     map[string]int16
	client         *clientView        // the client's view through the delivery path; nil when off
	reactive       workloads.Reactive // the source, when its arrivals follow ends
	arrivalPending bool
	arrivalAt      Time         // the earliest arrival event scheduled (reactive sources)
	progress       atomic.Int64 // requests ended, readable from other goroutines
	sink           TimelineSink
	worstK         int
	timeline       Timeline // scratch handed to the sink
	observer       Observer // sees chunks and ends as they happen (live.go); nil off
	aborts         []int    // request ids to cancel at the next step start (live.go)
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
	c := &s.Config
	if src == nil {
		var err error
		if src, err = workloads.New(c.Workload, Stream(c.Seed, "workload")); err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
	}
	kv, err := kvcache.New(s.Blocks, c.KVCache.BlockSize, s.SwapBlocks)
	if err != nil {
		return nil, err
	}
	if c.KVCache.EnablePrefixCaching {
		kv.EnablePrefixCaching()
	}
	sched, err := scheduler.New(c.Scheduler, kv, c.MaxModelLen)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		setup: s,
		src:   src,
		rep:   &Replica{sched: sched, kv: kv, cost: s.Cost},
		res:   newResult(Time(c.Metrics.TimeseriesIntervalS * 1e9)),
		stall: FromMS(c.Metrics.StallThresholdMS),
	}
	if s.Delivery != nil {
		e.client = newClientView(s.Delivery, e.res.Series.Interval)
		if f := s.Delivery.Config().Failover; f.WatchdogMS > 0 && !f.KeepPrimary {
			e.watchNS = FromMS(f.WatchdogMS)
		}
	}
	e.reps = []*Replica{e.rep}
	e.classIndex = map[string]int16{}
	for _, cl := range s.Classes { // configured classes first, in order
		e.classOf(cl.Name)
	}
	e.res.Name = c.Name
	e.res.WorstK = c.Metrics.WorstStreams
	if c.SpecDecode.Enabled() {
		e.res.SpecMethod, e.res.SpecK = c.SpecDecode.Method, c.SpecDecode.K
	}
	e.res.KVBlocks = s.Blocks
	e.onReject = e.rejectWaiting
	e.worstK = c.Metrics.WorstStreams
	if cv := c.Cost.NoiseCV; cv > 0 {
		e.noise = newRand(c.Seed, "step-noise")
		e.noiseSigma = math.Sqrt(math.Log1p(cv * cv))
		e.noiseMu = -e.noiseSigma * e.noiseSigma / 2
	}
	if c.Cost.HiccupRatePerS > 0 && c.Cost.HiccupMS > 0 {
		e.hiccups = newRand(c.Seed, "hiccups")
		e.hiccupNS = FromMS(c.Cost.HiccupMS)
		e.nextHiccup = e.hiccupGap()
	}
	e.reactive, _ = e.src.(workloads.Reactive)
	e.scheduleArrival()
	return e, nil
}

func (e *Engine) hiccupGap() Time {
	return Time(e.hiccups.ExpFloat64() / e.setup.Config.Cost.HiccupRatePerS * 1e9)
}

func (e *Engine) push(at Time, class eventClass) {
	e.pushFor(at, class, 0)
}

func (e *Engine) pushFor(at Time, class eventClass, replica int32) {
	e.seq++
	e.queue.push(event{at: at, class: class, replica: replica, seq: e.seq})
}

// Now is the simulated time of the last processed event.
func (e *Engine) Now() Time { return e.now }

// Setup is the resolved configuration the engine runs.
func (e *Engine) Setup() *Setup { return e.setup }

// Replica exposes the simulated replica for inspection between steps.
func (e *Engine) Replica() *Replica { return e.rep }

// Result returns the results so far; after Run, the final ones. With a
// delivery path it is the client's view (what users saw); ServerResult is
// then the server's.
func (e *Engine) Result() *Result {
	if e.client != nil {
		return e.client.res
	}
	return e.res
}

// ServerResult returns the server-side results: streams as the server
// emitted them. Without a delivery path it is Result.
func (e *Engine) ServerResult() *Result { return e.res }

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
	switch ev.class {
	case evArrival:
		e.arrive()
	case evStepStart:
		e.startStep(e.reps[ev.replica])
	case evStepEnd:
		e.endStep(e.reps[ev.replica])
	}
	return true
}

// classOf returns the index of a request's class in the result, adding
// classes as they appear (a trace may name any); -1 for none. The lookup
// runs once per request.
func (e *Engine) classOf(name string) int16 {
	if name == "" {
		return -1
	}
	if i, ok := e.classIndex[name]; ok {
		return i
	}
	i := int16(len(e.res.ClassNames))
	e.classIndex[name] = i
	e.res.ClassNames = append(e.res.ClassNames, name)
	e.res.ClassPooled = append(e.res.ClassPooled, quantile.NewHistogram(pooledBits))
	if e.client != nil {
		e.client.res.ClassPooled = append(e.client.res.ClassPooled, quantile.NewHistogram(pooledBits))
	}
	return i
}

// Progress is the number of requests that have ended (finished or
// rejected); safe to call from another goroutine while the engine runs.
func (e *Engine) Progress() int64 { return e.progress.Load() }

// Err reports a workload source that failed while it was read (a trace
// file that changed under the run); the run then ended short.
func (e *Engine) Err() error { return workloads.Err(e.src) }

// Run processes every event and returns the result.
func (e *Engine) Run() *Result {
	for e.Step() {
	}
	return e.Result()
}

func (e *Engine) finishRun() {
	if e.done {
		return
	}
	e.done = true
	e.res.Duration = e.now
	e.res.PrefixQueried, e.res.PrefixHits, e.res.PrefixEvictions = e.rep.kv.PrefixStats()
	e.res.SkippedRows = workloads.SkippedRows(e.src)
	if e.client != nil {
		e.finishClient()
	}
	for _, r := range e.reps {
		if n := r.Active(); n != 0 {
			panic(fmt.Sprintf("sim: run ended with %d requests neither finished nor rejected", n))
		}
		if r.kv.Free() != r.kv.Total() || r.kv.SwapFree() != r.kv.SwapTotal() {
			panic("sim: run ended with KV blocks still allocated")
		}
	}
}

// Check verifies the replica's invariants: every KV block is free or held
// by exactly one active request. Property tests call it between steps.
func (e *Engine) Check() error {
	for _, r := range e.reps {
		if err := r.kv.Check(r.liveAllocs()); err != nil {
			return err
		}
		bs := r.kv.BlockSize()
		for _, s := range r.sched.Running() {
			if (s.KV.Blocks+s.KV.SharedBlocks)*bs < s.Computed {
				return fmt.Errorf("sim: request %d holds %d blocks for %d computed tokens", s.ID, s.KV.Blocks+s.KV.SharedBlocks, s.Computed)
			}
		}
		if r.plan != nil {
			for _, en := range r.plan.Entries {
				if (en.Seq.KV.Blocks+en.Seq.KV.SharedBlocks)*bs < en.Start+en.Tokens {
					return fmt.Errorf("sim: request %d computes up to token %d with %d blocks", en.Seq.ID, en.Start+en.Tokens, en.Seq.KV.Blocks+en.Seq.KV.SharedBlocks)
				}
			}
		}
	}
	return nil
}

func (e *Engine) arrive() {
	if e.reactive != nil {
		if e.now >= e.arrivalAt {
			e.arrivalPending = false
		}
		if at, ok := e.reactive.NextAt(); !ok || Time(at) > e.now || !e.reactive.Next(&e.pending) {
			e.scheduleArrival() // a stale event: nothing is due yet
			return
		}
	} else {
		e.arrivalPending = false
	}
	p := &e.pending
	r := e.rep
	q := r.alloc()
	q.arrival = Time(p.Arrival)
	q.seed = p.Seed
	q.seq.ID, q.seq.Arrival, q.seq.Priority = p.ID, p.Arrival, p.Priority
	q.seq.Prompt, q.seq.Output = p.InputTokens, p.OutputTokens
	q.seq.Prefix, q.seq.PrefixUnit = p.PrefixBlocks, p.PrefixBlockTokens
	q.class = e.classOf(p.Class)
	q.specModel = e.setup.Spec
	if q.class >= 0 && int(q.class) < len(e.setup.ClassSpec) && e.setup.ClassSpec[q.class] != nil {
		q.specModel = e.setup.ClassSpec[q.class]
	}
	if q.specModel != nil {
		q.specModel.Start(&q.spec, p.Seed, p.OutputTokens)
	}
	e.res.Requests++
	q.live = true
	if d := r.sched.Arrive(int64(e.now), &q.seq); d.Verdict == scheduler.Reject {
		e.reject(r, q, d.Reason)
	} else {
		if e.watchNS > 0 {
			e.watch(r, q)
		}
		if !r.busy {
			r.busy = true
			e.push(e.now, evStepStart)
		}
	}
	e.scheduleArrival()
}

// scheduleArrival pulls the next request from the workload and schedules
// its arrival. A reactive source (closed loop) decides its next arrival
// only when requests end, so the engine asks it again after each end.
func (e *Engine) scheduleArrival() {
	if e.reactive == nil && e.arrivalPending {
		return
	}
	if e.reactive != nil {
		at, ok := e.reactive.NextAt()
		if !ok || (e.arrivalPending && Time(at) >= e.arrivalAt) {
			return
		}
		// An end may make a request due before the one scheduled: schedule
		// it too; the later event finds nothing due and does nothing.
		e.arrivalPending, e.arrivalAt = true, max(Time(at), e.now)
		e.push(e.arrivalAt, evArrival)
		return
	}
	if e.src.Next(&e.pending) {
		e.arrivalPending = true
		e.push(Time(e.pending.Arrival), evArrival)
	}
}

// ended tells a reactive source that a request ended now.
func (e *Engine) ended(id int) {
	if e.observer != nil { // the stream's summary was appended last
		e.observer.Ended(&e.res.Streams[len(e.res.Streams)-1])
	}
	if e.reactive != nil {
		e.reactive.Done(id, int64(e.now))
		e.scheduleArrival()
	}
}

func (e *Engine) rejectWaiting(s *scheduler.Seq, why scheduler.Reason) {
	e.reject(e.rep, e.rep.slots[s.Slot], why)
}

func (e *Engine) reject(r *Replica, q *request, why scheduler.Reason) {
	e.res.Rejected[why]++
	e.progress.Add(1)
	defer e.ended(q.seq.ID)
	rs := StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, Status: StatusRejected, Reject: why,
		Preemptions: q.preemptions, Class: q.class,
	}
	e.res.Streams = append(e.res.Streams, rs)
	if e.client != nil {
		e.client.res.Streams = append(e.client.res.Streams, rs)
	}
	r.release(q)
}

// startStep forms and prices the replica's next step and schedules its end.
func (e *Engine) startStep(r *Replica) {
	if len(e.aborts) > 0 {
		e.applyAborts(r)
	}
	if e.watchNS > 0 {
		e.checkWatchdog(r)
	}
	if e.setup.Spec != nil {
		e.chooseDrafts(r)
	}
	plan := r.sched.Schedule(int64(e.now), e.onReject)
	if plan.Empty() {
		r.busy = false
		return
	}
	r.plan = plan
	dur := e.priceStep(r, plan)
	bk := e.res.Series.bucket(e.now)
	e.notePreemptions(r, plan, bk)
	fd := float64(dur)
	bk.RunningNS += float64(len(r.sched.Running())) * fd
	bk.WaitingNS += float64(r.sched.Waiting()) * fd
	bk.PreemptedNS += float64(r.sched.Preempted()) * fd
	bk.KVUsedNS += r.kv.Utilization() * fd
	bk.BusyNS += dur
	bk.Steps++
	bk.BatchTokens += r.batch.Tokens()
	e.res.Steps++
	e.push(e.now+dur, evStepEnd)
}

// priceStep prices the plan's step and prepares its attribution: the time
// a stream in the step is charged by cause (inStep, with the plain-decode
// and speculative parts apart, split per stream at the step's end) and the
// time a running stream left out of it is charged (leftOut). It returns the
// step's duration.
func (e *Engine) priceStep(r *Replica, plan *scheduler.Plan) Time {
	b := &r.batch
	b.Reset()
	maxK := 0
	for i := range plan.Entries {
		en := &plan.Entries[i]
		if en.Decode {
			b.AddVerify(en.Start+1, en.Tokens)
			maxK = max(maxK, en.Tokens-1)
		} else {
			b.AddPrefill(en.Start, en.Tokens)
		}
	}
	// A step's time splits into plain decode work, speculative work beyond
	// it (drafting and the verified draft positions), and prefill work.
	verify := Time(r.cost.StepNS(b))
	decSpec := verify
	if b.PrefillTokens > 0 {
		decSpec = 0
		if b.DecodeSeqs > 0 {
			r.decBatch = b.DecodeOnly()
			decSpec = min(verify, Time(r.cost.StepNS(&r.decBatch)))
		}
	}
	plain := decSpec
	var draft Time
	if maxK > 0 {
		r.plainBatch = b.PlainDecode()
		plain = min(decSpec, Time(r.cost.StepNS(&r.plainBatch)))
		draft = e.draftTime(r, plan, maxK)
		e.res.Spec.DraftTime += draft
	}
	full := verify + draft
	extra := decSpec - plain + draft
	if e.noise != nil {
		f := math.Exp(e.noiseMu + e.noiseSigma*e.noise.NormFloat64())
		full = max(1, Time(float64(full)*f+0.5))
		plain = min(full, Time(float64(plain)*f+0.5))
		extra = min(full-plain, Time(float64(extra)*f+0.5))
	}
	var hiccup Time
	if e.hiccups != nil && e.now >= e.nextHiccup {
		hiccup = e.hiccupNS
		e.nextHiccup = e.now + hiccup + e.hiccupGap()
	}
	var swap Time
	if blocks := plan.SwapOutBlocks + plan.SwapInBlocks; blocks > 0 {
		bytes := int64(blocks) * e.setup.BlockBytes
		e.res.SwapBytes += bytes
		swap = Time(float64(bytes)/e.setup.HostBW*1e9 + 0.5)
	}
	dur := swap + full + hiccup
	r.plainNS, r.extraNS = plain, extra
	r.inStep = parts{}
	r.inStep[CausePrefillInterference] = full - plain - extra
	r.inStep[CauseKVSwap] = swap
	r.inStep[CauseEngineHiccup] = hiccup
	r.leftOut = parts{}
	if b.PrefillTokens > 0 {
		r.leftOut[CausePrefillInterference] = full
	} else {
		r.leftOut[CauseBatchFull] = full
	}
	r.leftOut[CauseKVSwap] = swap
	r.leftOut[CauseEngineHiccup] = hiccup
	return dur
}

// notePreemptions counts the plan's preemptions and starts (or, for a
// stream swapped back in, ends) the pause each stream's next gap will be
// charged for.
func (e *Engine) notePreemptions(r *Replica, plan *scheduler.Plan, bk *Bucket) {
	for _, p := range plan.Preempted {
		q := r.slots[p.Seq.Slot]
		q.preemptions++
		bk.Preemptions++
		if p.Mode == scheduler.Swap {
			e.res.PreemptSwap++
		} else {
			e.res.PreemptRecompute++
		}
		if !q.paused {
			q.paused, q.pauseStart = true, e.now
			q.pauseCause = CauseKVRecompute
			if p.Mode == scheduler.Swap {
				q.pauseCause = CauseKVSwap
			}
		}
	}
	for _, s := range plan.SwappedIn {
		q := r.slots[s.Slot]
		if q.paused && q.pauseCause == CauseKVSwap {
			q.acc[CauseKVSwap] += e.now - q.pauseStart
			q.paused = false
		}
	}
}

// endStep makes the step's tokens visible, attributes the step's time to
// every running stream, and starts the next step.
func (e *Engine) endStep(r *Replica) {
	plan := r.plan
	r.plan = nil
	spec := e.setup.Spec
	// Draw every verification's outcome first: a stream that did not
	// speculate is charged the step's overall rejected share.
	var drafted, rejected int
	if r.extraNS > 0 || spec != nil {
		r.accepted = r.accepted[:0]
		for i := range plan.Entries {
			en := &plan.Entries[i]
			a := 0
			if k := en.Tokens - 1; en.Decode && k > 0 {
				qq := r.slots[en.Seq.Slot]
				a = qq.specModel.Draw(&qq.spec, k)
				drafted += k
				rejected += k - a
			}
			r.accepted = append(r.accepted, a)
		}
	}
	for i := range plan.Entries {
		en := &plan.Entries[i]
		q := r.slots[en.Seq.Slot]
		k := 0
		if en.Decode {
			k = en.Tokens - 1
		}
		if !q.paused {
			p := r.inStep
			var rej Time
			if r.extraNS > 0 {
				switch {
				case k > 0:
					rej = Time(float64(r.extraNS)*float64(k-r.accepted[i])/float64(k) + 0.5)
				case drafted > 0:
					rej = Time(float64(r.extraNS)*float64(rejected)/float64(drafted) + 0.5)
				}
			}
			p[CauseDecode] = r.plainNS + r.extraNS - rej
			p[CauseSpecRejection] = rej
			q.acc.add(&p)
		}
		if e.watchNS > 0 {
			if d := e.deadline(q); e.now > d {
				// The watchdog fired during the step: the stream is aborted
				// before its tokens are seen.
				e.cancel(r, q, d)
				continue
			}
		}
		if k > 0 {
			a := r.accepted[i]
			n := en.Seq.Verify(a)
			r.kv.Shrink(&en.Seq.KV, en.Seq.Computed)
			st := &e.res.Spec
			st.Steps++
			st.Drafted += int64(k)
			st.Accepted += int64(n - 1)
			st.Emitted += int64(n)
			for j := range k {
				st.Drafts[j]++
				if j < n-1 {
					st.ByPosition[j]++
				}
			}
			st.DecodeEntries++
			st.DecodeTokens += int64(n)
			q.specModel.Record(&q.spec, k, n-1, n)
			e.emit(r, q, n)
		} else if sampled := en.Seq.Advance(en.Tokens); len(en.Seq.Prefix) > 0 && !en.Decode {
			r.kv.RegisterPrefix(&en.Seq.KV, en.Seq.Prefix, en.Seq.PrefixUnit, min(en.Seq.Computed, en.Seq.Prompt))
			if sampled {
				e.sampled(r, q, en)
			}
		} else if sampled {
			e.sampled(r, q, en)
		}
	}
	for _, s := range r.sched.Running() {
		if s.Sched == 0 {
			if q := r.slots[s.Slot]; !q.paused {
				q.acc.add(&r.leftOut)
			}
		}
	}
	e.push(e.now, evStepStart)
}

// sampled makes the one token a plain step sampled visible.
func (e *Engine) sampled(r *Replica, q *request, en *scheduler.Entry) {
	if spec := q.specModel; spec != nil {
		if en.Decode {
			e.res.Spec.DecodeEntries++
			e.res.Spec.DecodeTokens++
		}
		spec.Record(&q.spec, 0, 0, 1)
	}
	e.emit(r, q, 1)
}

// chooseDrafts sets, for every running decoding sequence, how many tokens
// it drafts this step: k while its stream still speculates (fallback) and
// the batch is not above disable_by_batch_size, never past its last token.
func (e *Engine) chooseDrafts(r *Replica) {
	cfg := e.setup.Config.SpecDecode
	running := r.sched.Running()
	off := cfg.DisableByBatchSize > 0 && len(running) > cfg.DisableByBatchSize
	for _, s := range running {
		s.Spec = 0
		if off || !s.Decoding() {
			continue
		}
		if q := r.slots[s.Slot]; q.specModel.Active(&q.spec) {
			s.Spec = max(0, min(cfg.K, s.Output-s.Generated-1))
		}
	}
}

// draftTime is how long the proposer takes to draft for the step's
// speculating sequences: maxK sequential steps of the draft model over
// them, or the cheap proposer's cost.
func (e *Engine) draftTime(r *Replica, plan *scheduler.Plan, maxK int) Time {
	if e.setup.DraftCost == nil {
		return Time(e.setup.Config.SpecDecode.ProposerNS(maxK))
	}
	db := &r.draftBatch
	db.Reset()
	for i := range plan.Entries {
		if en := &plan.Entries[i]; en.Decode && en.Tokens > 1 {
			db.AddDecode(en.Start + 1)
		}
	}
	return Time(maxK) * Time(e.setup.DraftCost.StepNS(db))
}

// emit records a chunk of n tokens becoming visible now.
func (e *Engine) emit(r *Replica, q *request, n int) {
	now := e.now
	q.chunks++
	q.chunkTok = append(q.chunkTok, int32(n))
	bk := e.res.Series.bucket(now)
	bk.OutputTokens += int64(n)
	if q.chunks == 1 {
		q.first = now
		q.acc = parts{}
		q.paused = false
	} else {
		gap := now - q.last
		if q.paused {
			q.acc[q.pauseCause] += now - q.pauseStart
			q.paused = false
		}
		if s := q.acc.sum(); s != gap {
			panic(fmt.Sprintf("sim: request %d: gap %d ns but its parts sum to %d ns (%v)", q.seq.ID, gap, s, q.acc))
		}
		q.gaps = append(q.gaps, int64(gap))
		e.res.Pooled.Record(int64(gap))
		if q.class >= 0 {
			e.res.ClassPooled[q.class].Record(int64(gap))
		}
		e.res.PerToken.RecordN(int64(gap)/int64(n), uint64(n))
		bk.ITL.Record(int64(gap))
		if e.client == nil { // with a delivery path, positions are the client's
			pos := min(PositionBuckets-1, bitLen(q.seq.Generated-n)-1)
			e.res.Position[pos].Record(int64(gap))
			e.res.PositionPerToken[pos].RecordN(int64(gap)/int64(n), uint64(n))
		}
		if gap > e.stall {
			e.noteStall(q, gap, q.chunks-1)
		}
		if e.client != nil {
			q.noteGapCauses(gap)
		}
		q.acc = parts{}
	}
	q.last = now
	if e.observer != nil {
		e.observer.Chunk(q.seq.ID, now, n, q.seq.Done())
	}
	if q.seq.Done() {
		bk.Finished++
		e.finish(r, q)
	}
}

// noteStall records gap, which ends chunk index of q and is longer than the
// stall threshold, split by q.acc.
func (e *Engine) noteStall(q *request, gap Time, index int) {
	q.stalls++
	q.stallTime += gap
	for c, v := range q.acc {
		if v > 0 {
			e.res.StallTime[c] += v
			q.causes |= 1 << c
		}
	}
	q.stallList = append(q.stallList, Stall{Index: index, Gap: gap, Parts: q.acc})
}

// offerTimeline hands the stream's chunks to the sink and the worst-stream
// list before its gaps are sorted. Chunk times are rebuilt from the first
// chunk and the gaps, so a stream stores one number per gap.
func (e *Engine) offerTimeline(q *request) {
	if q.chunks == 0 || (e.sink == nil || e.client != nil) && e.worstK == 0 { // no chunks: aborted while queued (live.go)
		return
	}
	var maxGap Time
	for _, g := range q.gaps {
		maxGap = max(maxGap, Time(g))
	}
	if (e.sink == nil || e.client != nil) && len(e.res.Worst) == e.worstK &&
		worstLess(&WorstStream{ID: q.seq.ID, MaxGap: maxGap}, &e.res.Worst[e.worstK-1]) >= 0 {
		return
	}
	t := &e.timeline
	t.ID, t.Arrival, t.InputTokens, t.OutputTokens = q.seq.ID, q.arrival, q.seq.Prompt, q.seq.Generated
	t.Chunks = append(t.Chunks[:0], Chunk{At: q.first, Tokens: int(q.chunkTok[0])})
	at := q.first
	for i, g := range q.gaps {
		at += Time(g)
		t.Chunks = append(t.Chunks, Chunk{At: at, Tokens: int(q.chunkTok[i+1])})
	}
	t.Stalls = q.stallList
	if e.sink != nil && e.client == nil { // with a delivery path the sink gets the client's view
		e.sink.Stream(t)
	}
	e.res.Worst = offerWorst(e.res.Worst, e.worstK, t, maxGap)
}

func bitLen(x int) int {
	n := 0
	for x > 0 {
		n++
		x >>= 1
	}
	return n
}

// finish ends a stream that produced all its tokens.
func (e *Engine) finish(r *Replica, q *request) {
	r.sched.Finish(&q.seq)
	e.res.Finished++
	e.end(r, q, 0)
}

// end reduces a stream that finished, or was cancelled at cancelAt (the
// caller aborted it), to its summary and frees its slot.
func (e *Engine) end(r *Replica, q *request, cancelAt Time) {
	s := StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, OutputTokens: q.seq.Generated,
		Status: StatusFinished, Chunks: q.chunks,
		Stalls: q.stalls, StallTime: q.stallTime, Causes: q.causes, Preemptions: q.preemptions,
		Class: q.class,
	}
	if q.chunks > 0 {
		s.TTFT, s.E2EL = q.first-q.arrival, q.last-q.arrival
	}
	if e.client != nil {
		e.deliver(q, cancelAt) // the client's view holds the timelines and worst streams
	} else {
		e.offerTimeline(q)
	}
	if cancelAt != 0 {
		// The server's figures count the silence a cancelled stream ended
		// in, up to the abort, as if its next token had come then: the wait
		// was at least that long. Leaving it out would keep exactly the
		// worst streams out of the server view.
		s.Status = StatusCancelled
		s.E2EL = e.now - q.arrival
		if q.chunks == 0 {
			s.TTFT = s.E2EL
		} else {
			q.gaps = append(q.gaps, int64(e.now-q.last)) // cancel counted it as a stall
			s.Chunks++                                   // the abort stands for the next chunk
		}
	}
	if g := q.gaps; len(g) > 0 {
		var sum int64
		for _, v := range g {
			sum += v
		}
		s.GapMean = float64(sum) / float64(len(g))
		var mx int64
		s.GapP50, s.GapP90, s.GapP99, mx = quantile.StreamStats(g)
		s.GapMax = Time(mx)
	}
	for c := range NumCauses {
		if q.causes&(1<<c) != 0 {
			e.res.StreamsHit[c]++
		}
	}
	if q.spec.FellBack {
		e.res.Spec.Fallbacks++
	}
	e.res.Streams = append(e.res.Streams, s)
	e.progress.Add(1)
	defer e.ended(q.seq.ID)
	if cancelAt == 0 {
		e.res.InputTokens += int64(q.seq.Prompt)
	}
	e.res.OutputTokens += int64(q.seq.Generated)
	r.release(q)
}
