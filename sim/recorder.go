package sim

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/sim/quantile"
)

// recorder turns one replica's chunks, ends and rejections into results:
// the server's view in res and, with a delivery path, the client's in
// client. Every replica has its own; the engine merges them for the
// cluster (Result.Merge). What the recorders of one run share — the stall
// threshold, the worst-stream count, the timeline sink and the progress
// counter — is in recording.
type recorder struct {
	res    *Result
	spares *Spares     // where the replica's request slots come from (NewReusing); nil allocates
	client *clientView // the client's view through the delivery path; nil when off
	// classDelivery[c] carries class c's streams when the class has
	// delivery settings of its own (nil: the run's path).
	classDelivery []*delivery.Path
	replica       int        // its replica's index, named to the observer
	step          stepCounts // the step's chunks of whole-step gaps (flushStep)
	// log holds the replica's step durations from step index logBase on:
	// a stream that was in every step keeps its gaps as a run of step
	// indexes (request.runFrom, runLen) and copies them out of the log when
	// the run ends (flushRun), so a token appends nothing to the stream.
	log     []int64
	logBase int64
	// pos and posTok are where flushStep records the server's ITL by
	// position: the replica's result's, or in a cluster the engine's one
	// set (clusterHists).
	pos, posTok *[PositionBuckets]*quantile.Histogram
	itl         *Series // where ITL over time goes when not the replica's (a cluster's series); nil: its own
	*recording
}

// clusterHists are the histograms every replica of a cluster records
// into: ITL by position and, without a delivery path, over time. No
// report shows a replica's (its summary and load chart do not read them),
// and sixteen replicas' sets of 32 histograms, each step touching a dozen,
// kept the CPU's caches full of counters no one reads: the replicas record
// into one set, merged once into the cluster's result. Every value is an
// integer number of ns and every count an integer, so the merged
// histograms are those of separate sets merged (sums of integers are exact
// in float64 below 2^53 ns, 104 days of summed gaps).
type clusterHists struct {
	gap, tok [PositionBuckets]*quantile.Histogram
	// itl is the replicas' ITL over time, for the same reason, when no
	// replica has a delivery path (the server view is then the run's): a
	// replica's buckets keep their gauges and counts, not a 20 KB
	// histogram each (sixteen replicas over 1,024 buckets held 320 MB).
	// Its buckets are the replicas' at its interval, which is never above
	// theirs: a replica's series has a bucket for every ITL it records.
	itl *Series
}

// newClusterHists is an empty set; with series, it holds the ITL series too.
func newClusterHists(interval Time, series bool, sp *Spares) *clusterHists {
	p := &clusterHists{}
	for i := range p.gap {
		p.gap[i], p.tok[i] = sp.take(), sp.take()
	}
	if series {
		p.itl = &Series{Interval: interval, pool: sp}
	}
	return p
}

// mergeInto adds the set to a merged result's.
func (p *clusterHists) mergeInto(m *Result) {
	for i := range p.gap {
		m.Position[i].Merge(p.gap[i])
		m.PositionPerToken[i].Merge(p.tok[i])
	}
	if p.itl != nil {
		for m.Series.Interval < p.itl.Interval {
			m.Series.halve()
		}
		for i := range p.itl.Buckets {
			b := &p.itl.Buckets[i]
			m.Series.bucket(b.Start).ITL.Merge(b.ITL)
		}
		p.itl.settle()
		m.Series.settle()
	}
}

// itlBucket is the bucket whose ITL histogram takes a gap that ended at
// now: the replica's own, or the engine's series in a cluster.
func (rc *recorder) itlBucket(bk *Bucket, now Time) *Bucket {
	if rc.itl != nil {
		return rc.itl.bucket(now)
	}
	return bk
}

// recording is what every replica's recorder of one run shares.
type recording struct {
	stall       Time // gaps above it are stalls
	worstK      int
	sink        TimelineSink
	timeline    Timeline       // scratch handed to the sink
	progress    atomic.Int64   // requests ended, readable from other goroutines
	observer    Observer       // sees chunks and ends as they happen (live.go); nil off
	steps       StepObserver   // the observer, when it sees steps too
	stepScratch []PrefillChunk // reused for each step's report
	fin         *finisher      // reduces ended streams on its own goroutine during Engine.Run; nil: at once
	scratch     ended          // the ended stream reduced at once when fin is nil
	// reference runs the straightforward step (Config.Reference): no
	// gap is counted per step or kept as a run of the step log.
	reference bool
}

// result is the recorder's view of the run: the client's with a delivery
// path, else the server's.
func (rc *recorder) result() *Result {
	if rc.client != nil {
		return rc.client.res
	}
	return rc.res
}

// chunk records a chunk of n tokens of q becoming visible at now and
// reports whether it was the stream's last. split, when not nil, is the
// split of the gap the chunk closes, which is exactly the step that just
// ended (the replica checked its sum); nil means q.acc holds the split,
// checked here. The chunks of such gaps all have the step's length: they
// are counted per step and recorded by flushStep.
func (rc *recorder) chunk(now Time, q *request, n int, split *parts) (done bool) {
	res := rc.res
	q.chunks++
	if n != 1 || q.multi {
		q.noteTokens(n)
	}
	if q.chunks == 1 {
		res.Series.bucket(now).OutputTokens += int64(n)
		q.first = now
		q.acc = parts{}
		q.paused, q.dirty = false, false
	} else {
		gap := now - q.last
		if split == nil {
			if q.paused {
				q.acc[q.pauseCause] += now - q.pauseStart
				q.paused = false
			}
			if s := q.acc.sum(); s != gap {
				panic(fmt.Sprintf("sim: request %d: gap %d ns but its parts sum to %d ns (%v)", q.seq.ID, gap, s, q.acc))
			}
		}
		// Counted per step and kept as a run of the step log rather than
		// recorded by itself: with each gap recorded as it closes (and
		// wholeSteps off), CPU time was 1.6-2.5x on the five benchmarks of
		// docs/benchmarks-log.md (2026-12-03; 1.95x geometric mean).
		if split != nil && n <= maxStepChunk {
			rc.wholeStep(q, n)
		} else {
			rc.flushRun(q)
			q.gaps = append(q.gaps, int64(gap))
			rc.record(now, q, gap, n)
		}
		p := split
		if p == nil {
			p = &q.acc
		}
		if gap > rc.stall {
			rc.noteStall(q, gap, q.chunks-1, p)
		}
		if rc.client != nil {
			q.noteGapCauses(gap, p)
		}
		if split == nil {
			q.acc = parts{}
			q.dirty = false
		}
	}
	q.last = now
	if rc.observer != nil {
		rc.observer.Chunk(rc.replica, q.seq.ID, now, n, q.seq.Done())
	}
	if q.seq.Done() {
		res.Series.bucket(now).Finished++
		return true
	}
	return false
}

// wholeStep records a chunk of n tokens whose gap was the step that just
// ended, and nothing else: q's run of whole-step gaps grows by one, and
// the chunk is counted in the step's histograms (flushStep).
func (rc *recorder) wholeStep(q *request, n int) {
	rc.extendRun(q)
	rc.step.count(q, n, rc.client == nil)
}

// extendRun adds the step that just ended to q's open run of whole-step
// gaps (opening one, after flushing a run that broke, when it does not
// end at the step before).
func (rc *recorder) extendRun(q *request) {
	if cur := rc.logBase + int64(len(rc.log)) - 1; q.runLen == 0 || q.runFrom+int64(q.runLen) != cur {
		rc.openRun(q, cur)
	}
	q.runLen++
}

// openRun flushes q's open run, if any, and opens an empty one at step cur.
func (rc *recorder) openRun(q *request, cur int64) {
	rc.flushRun(q)
	q.runFrom = cur
}

// flushRun appends q's open run of whole-step gaps to q.gaps.
func (rc *recorder) flushRun(q *request) {
	if q.runLen == 0 {
		return
	}
	from := int(q.runFrom - rc.logBase)
	q.gaps = append(q.gaps, rc.log[from:from+int(q.runLen)]...)
	q.runLen = 0
}

// record adds a gap of q closed by a chunk of n tokens to the pooled,
// per-token, per-class, per-bucket and (server view) per-position
// histograms.
func (rc *recorder) record(now Time, q *request, gap Time, n int) {
	res := rc.res
	bk := res.Series.bucket(now)
	bk.OutputTokens += int64(n)
	res.Pooled.Record(int64(gap))
	if q.class >= 0 {
		res.ClassPooled[q.class].Record(int64(gap))
	}
	res.PerToken.RecordN(int64(gap)/int64(n), uint64(n))
	rc.itlBucket(bk, now).ITL.Record(int64(gap))
	if rc.client == nil { // with a delivery path, positions are the client's
		pos := positionOf(q.seq.Generated - n)
		rc.pos[pos].Record(int64(gap))
		rc.posTok[pos].RecordN(int64(gap)/int64(n), uint64(n))
	}
}

// stepCounts counts the chunks whose gap was exactly the step that just
// ended, by position, class and size (up to maxStepChunk tokens: a
// speculative step's chunks): they all have the step's length, so each
// histogram takes them in a few records (flushStep). Histograms add
// counts and their sums are of integers, so the results are those of
// recording each gap.
type stepCounts struct {
	total  uint64 // chunks
	tokens uint64
	multi  bool // some chunk had more than one token: byN and posN hold them
	byN    [maxStepChunk + 1]uint64
	pos    [PositionBuckets]uint64
	posN   [PositionBuckets][maxStepChunk + 1]uint64
	class  []uint64 // by class index; grown as classes appear
}

// maxStepChunk bounds the chunks counted per step; a larger one is
// recorded by itself.
const maxStepChunk = 16

func (st *stepCounts) count(q *request, n int, positions bool) {
	st.total++
	st.tokens += uint64(n)
	if q.class >= 0 {
		if int(q.class) >= len(st.class) {
			st.class = append(st.class, make([]uint64, int(q.class)+1-len(st.class))...)
		}
		st.class[q.class]++
	}
	p := 0
	if positions {
		p = positionOf(q.seq.Generated - n)
		st.pos[p]++
	}
	if n > 1 {
		st.multi = true
		st.byN[n]++
		if positions {
			st.posN[p][n]++
		}
	}
}

// perToken records, in h, c chunks of a gap v (ns) of which byN[n] had n
// tokens each (n ≥ 2) and the rest one, as a token each at v/n; it clears
// byN.
func perToken(h *quantile.Histogram, v int64, c uint64, byN *[maxStepChunk + 1]uint64, multi bool) {
	if multi {
		for n := 2; n <= maxStepChunk; n++ {
			if k := byN[n]; k > 0 {
				h.RecordN(v/int64(n), uint64(n)*k)
				c -= k
				byN[n] = 0
			}
		}
	}
	if c > 0 {
		h.RecordN(v, c)
	}
}

// flushStep records the step's counted chunks, each a gap of dur, at now.
func (rc *recorder) flushStep(now, dur Time) {
	st := &rc.step
	if st.total == 0 {
		return
	}
	res := rc.res
	v, n := int64(dur), st.total
	bk := res.Series.bucket(now)
	bk.OutputTokens += int64(st.tokens)
	res.Pooled.RecordN(v, n)
	perToken(res.PerToken, v, n, &st.byN, st.multi)
	rc.itlBucket(bk, now).ITL.RecordN(v, n)
	for c, k := range st.class {
		if k > 0 {
			res.ClassPooled[c].RecordN(v, k)
			st.class[c] = 0
		}
	}
	if rc.client == nil {
		for p, k := range st.pos {
			if k > 0 {
				rc.pos[p].RecordN(v, k)
				perToken(rc.posTok[p], v, k, &st.posN[p], st.multi)
				st.pos[p] = 0
			}
		}
	}
	st.total, st.tokens, st.multi = 0, 0, false
}

// positionOf is the position bucket of the token after the first
// generated ones: ⌊log2 generated⌋, capped.
func positionOf(generated int) int {
	if generated <= 0 {
		return 0
	}
	return min(PositionBuckets-1, bits.Len(uint(generated))-1)
}

// noteTokens records the size of q's latest chunk, n, once some chunk had
// more than one token: until then chunkTok stays empty (multi false) and every chunk is
// one token (tokensOf).
func (q *request) noteTokens(n int) {
	q.multi = true
	for len(q.chunkTok) < q.chunks-1 {
		q.chunkTok = append(q.chunkTok, 1)
	}
	q.chunkTok = append(q.chunkTok, int32(n))
}

// tokensOf is the number of tokens of q's chunk i.
func (q *request) tokensOf(i int) int {
	if !q.multi {
		return 1
	}
	return int(q.chunkTok[i])
}

// noteStall records gap, which ends chunk index of q and is longer than the
// stall threshold, split by p.
func (rc *recorder) noteStall(q *request, gap Time, index int, p *parts) {
	q.stalls++
	q.stallTime += gap
	for c, v := range p {
		if v > 0 {
			rc.res.StallTime[c] += v
			q.causes |= 1 << c
		}
	}
	q.stallList = append(q.stallList, Stall{Index: index, Gap: gap, Parts: *p})
}

// reject records q's rejection by the replica's scheduler.
func (rc *recorder) reject(q *request, why scheduler.Reason) {
	rc.res.Rejected[why]++
	rc.progress.Add(1)
	rs := StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, Status: StatusRejected, Reject: why,
		Preemptions: q.preemptions, Class: q.class,
	}
	if rc.client != nil {
		rc.client.res.Streams.Append(rs)
	}
	x := rc.ending()
	x.rc, x.s, x.reject = rc, rs, true
	rc.reduce(x)
}

// offerTimeline hands the stream's chunks to the sink and the worst-stream
// list before its gaps are sorted. Chunk times are rebuilt from the first
// chunk and the gaps, so a stream stores one number per gap.
func (rc *recorder) offerTimeline(x *ended, t *Timeline) {
	if x.chunks == 0 || rc.sink == nil && rc.worstK == 0 { // no chunks: aborted while queued (live.go)
		return
	}
	res := rc.res
	gaps := x.gaps[:x.shown]
	var maxGap Time
	for _, g := range gaps {
		maxGap = max(maxGap, Time(g))
	}
	if rc.sink == nil && len(res.Worst) == rc.worstK &&
		worstLess(&WorstStream{ID: x.s.ID, MaxGap: maxGap}, &res.Worst[rc.worstK-1]) >= 0 {
		return
	}
	t.ID, t.Arrival, t.InputTokens, t.OutputTokens = x.s.ID, x.s.Arrival, x.s.InputTokens, x.s.OutputTokens
	t.Status = x.s.Status // finished, cancelled (the watchdog), or failed (aborted: serve's client went away)
	t.Abort = x.abort
	// The chunks are written in place (a sized slice, no append per
	// chunk), one token each unless some chunk had more.
	t.Chunks = slices.Grow(t.Chunks[:0], len(gaps)+1)[:len(gaps)+1]
	cs := t.Chunks
	at := x.first
	cs[0] = Chunk{At: at, Tokens: x.tokensOf(0)}
	if x.multi {
		for i, g := range gaps {
			at += Time(g)
			cs[i+1] = Chunk{At: at, Tokens: int(x.tok[i+1])}
		}
	} else {
		for i, g := range gaps {
			at += Time(g)
			cs[i+1] = Chunk{At: at, Tokens: 1}
		}
	}
	t.Stalls = x.stalls
	if rc.sink != nil {
		rc.sink.Stream(t)
	}
	if x.abort == "" { // an aborted stream is a failed request: no worst stream
		res.Worst = offerWorst(res.Worst, rc.worstK, t, maxGap)
	}
}

// ending is the entry for the next ended stream: the finisher's during
// Engine.Run, else the recorder's scratch one. reduce hands it on.
func (rc *recorder) ending() *ended {
	if rc.fin != nil {
		return rc.fin.next()
	}
	return &rc.scratch
}

// reduce reduces x now, or hands it to the finisher.
func (rc *recorder) reduce(x *ended) {
	if rc.fin != nil {
		rc.fin.commit()
		return
	}
	x.reduce(&rc.timeline)
}

// end reduces, at now, a stream that finished, or was cancelled at
// cancelAt (the watchdog aborted it), to its summary.
func (rc *recorder) end(now Time, q *request, cancelAt Time) { rc.endAs(now, q, cancelAt, "") }

// endAs is end, or with abort set the end of a stream Engine.Abort ended
// for that reason: failed, as its client saw it (the chunks it made
// visible, no gap for the silence it ended in, its prompt not counted as
// served), handed to the sink and to no worst-stream list.
func (rc *recorder) endAs(now Time, q *request, cancelAt Time, abort string) {
	res := rc.res
	rc.flushRun(q)
	x := rc.ending()
	x.rc, x.reject, x.offer = rc, false, rc.client == nil
	x.abort = abort
	x.s = StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, OutputTokens: q.seq.Generated,
		Status: StatusFinished, Chunks: q.chunks,
		Stalls: q.stalls, StallTime: q.stallTime, Causes: q.causes, Preemptions: q.preemptions,
		Class: q.class,
	}
	s := &x.s
	if q.chunks > 0 {
		s.TTFT, s.E2EL = q.first-q.arrival, q.last-q.arrival
	}
	if abort != "" {
		s.Status = StatusFailed
		if rc.client != nil { // not driven live: the client view takes it as a cancel now
			cancelAt = max(now, 1)
		}
	}
	if rc.client != nil {
		rc.deliver(q, cancelAt) // the client's view holds the timelines and worst streams
	}
	x.first, x.chunks, x.shown, x.multi = q.first, q.chunks, len(q.gaps), q.multi
	if cancelAt != 0 && abort == "" {
		// The server's figures count the silence a cancelled stream ended
		// in, up to the abort, as if its next token had come then: the wait
		// was at least that long. Leaving it out would keep exactly the
		// worst streams out of the server view.
		s.Status = StatusCancelled
		s.E2EL = now - q.arrival
		if q.chunks == 0 {
			s.TTFT = s.E2EL
		} else {
			q.gaps = append(q.gaps, int64(now-q.last)) // cancel counted it as a stall
			s.Chunks++                                 // the abort stands for the next chunk
		}
	}
	if rc.fin != nil { // the request's slot is reused before the finisher reads them
		x.gaps = append(x.gaps[:0], q.gaps...)
		x.tok = append(x.tok[:0], q.chunkTok...)
		x.stalls = append(x.stalls[:0], q.stallList...)
	} else {
		x.gaps, x.tok, x.stalls = q.gaps, q.chunkTok, q.stallList
	}
	for c := range NumCauses {
		if q.causes&(1<<c) != 0 {
			res.StreamsHit[c]++
		}
	}
	if q.specModel != nil && q.spec.FellBack {
		res.Spec.Fallbacks++
	}
	rc.reduce(x)
	rc.progress.Add(1)
	if cancelAt == 0 && abort == "" {
		res.InputTokens += int64(q.seq.Prompt)
	}
	res.OutputTokens += int64(q.seq.Generated)
}

// addClass makes room for a new class's histograms.
func (rc *recorder) addClass(name string) {
	rc.res.ClassNames = append(rc.res.ClassNames, name)
	rc.res.ClassPooled = append(rc.res.ClassPooled, quantile.NewHistogram(pooledBits))
	if rc.client != nil {
		rc.client.res.ClassPooled = append(rc.client.res.ClassPooled, quantile.NewHistogram(pooledBits))
	}
}
