package sim

import (
	"fmt"
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
	client *clientView // the client's view through the delivery path; nil when off
	// classDelivery[c] carries class c's streams when the class has
	// delivery settings of its own (nil: the run's path).
	classDelivery []*delivery.Path
	replica       int // its replica's index, named to the observer
	*recording
}

// recording is what every replica's recorder of one run shares.
type recording struct {
	stall    Time // gaps above it are stalls
	worstK   int
	sink     TimelineSink
	timeline Timeline     // scratch handed to the sink
	progress atomic.Int64 // requests ended, readable from other goroutines
	observer Observer     // sees chunks and ends as they happen (live.go); nil off
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
// reports whether it was the stream's last.
func (rc *recorder) chunk(now Time, q *request, n int) (done bool) {
	res := rc.res
	q.chunks++
	q.chunkTok = append(q.chunkTok, int32(n))
	bk := res.Series.bucket(now)
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
		res.Pooled.Record(int64(gap))
		if q.class >= 0 {
			res.ClassPooled[q.class].Record(int64(gap))
		}
		res.PerToken.RecordN(int64(gap)/int64(n), uint64(n))
		bk.ITL.Record(int64(gap))
		if rc.client == nil { // with a delivery path, positions are the client's
			pos := min(PositionBuckets-1, bitLen(q.seq.Generated-n)-1)
			res.Position[pos].Record(int64(gap))
			res.PositionPerToken[pos].RecordN(int64(gap)/int64(n), uint64(n))
		}
		if gap > rc.stall {
			rc.noteStall(q, gap, q.chunks-1)
		}
		if rc.client != nil {
			q.noteGapCauses(gap)
		}
		q.acc = parts{}
	}
	q.last = now
	if rc.observer != nil {
		rc.observer.Chunk(rc.replica, q.seq.ID, now, n, q.seq.Done())
	}
	if q.seq.Done() {
		bk.Finished++
		return true
	}
	return false
}

// noteStall records gap, which ends chunk index of q and is longer than the
// stall threshold, split by q.acc.
func (rc *recorder) noteStall(q *request, gap Time, index int) {
	q.stalls++
	q.stallTime += gap
	for c, v := range q.acc {
		if v > 0 {
			rc.res.StallTime[c] += v
			q.causes |= 1 << c
		}
	}
	q.stallList = append(q.stallList, Stall{Index: index, Gap: gap, Parts: q.acc})
}

// reject records q's rejection by the replica's scheduler.
func (rc *recorder) reject(q *request, why scheduler.Reason) {
	rc.res.Rejected[why]++
	rc.progress.Add(1)
	rs := StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, Status: StatusRejected, Reject: why,
		Preemptions: q.preemptions, Class: q.class,
	}
	rc.res.Streams.Append(rs)
	if rc.client != nil {
		rc.client.res.Streams.Append(rs)
	}
	if rc.sink != nil {
		rc.sinkNoChunks(q, StatusRejected, why)
	}
}

// offerTimeline hands the stream's chunks to the sink and the worst-stream
// list before its gaps are sorted. Chunk times are rebuilt from the first
// chunk and the gaps, so a stream stores one number per gap.
func (rc *recorder) offerTimeline(q *request) {
	if q.chunks == 0 || (rc.sink == nil || rc.client != nil) && rc.worstK == 0 { // no chunks: aborted while queued (live.go)
		return
	}
	res := rc.res
	var maxGap Time
	for _, g := range q.gaps {
		maxGap = max(maxGap, Time(g))
	}
	if (rc.sink == nil || rc.client != nil) && len(res.Worst) == rc.worstK &&
		worstLess(&WorstStream{ID: q.seq.ID, MaxGap: maxGap}, &res.Worst[rc.worstK-1]) >= 0 {
		return
	}
	t := &rc.timeline
	t.ID, t.Arrival, t.InputTokens, t.OutputTokens = q.seq.ID, q.arrival, q.seq.Prompt, q.seq.Generated
	t.Chunks = append(t.Chunks[:0], Chunk{At: q.first, Tokens: int(q.chunkTok[0])})
	at := q.first
	for i, g := range q.gaps {
		at += Time(g)
		t.Chunks = append(t.Chunks, Chunk{At: at, Tokens: int(q.chunkTok[i+1])})
	}
	t.Stalls = q.stallList
	if rc.sink != nil && rc.client == nil { // with a delivery path the sink gets the client's view
		rc.sink.Stream(t)
	}
	res.Worst = offerWorst(res.Worst, rc.worstK, t, maxGap)
}

func bitLen(x int) int {
	n := 0
	for x > 0 {
		n++
		x >>= 1
	}
	return n
}

// end reduces, at now, a stream that finished, or was cancelled at
// cancelAt (the watchdog aborted it), to its summary.
func (rc *recorder) end(now Time, q *request, cancelAt Time) {
	res := rc.res
	s := StreamSummary{
		ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, OutputTokens: q.seq.Generated,
		Status: StatusFinished, Chunks: q.chunks,
		Stalls: q.stalls, StallTime: q.stallTime, Causes: q.causes, Preemptions: q.preemptions,
		Class: q.class,
	}
	if q.chunks > 0 {
		s.TTFT, s.E2EL = q.first-q.arrival, q.last-q.arrival
	}
	if rc.client != nil {
		rc.deliver(q, cancelAt) // the client's view holds the timelines and worst streams
	} else {
		rc.offerTimeline(q)
	}
	if cancelAt != 0 {
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
			res.StreamsHit[c]++
		}
	}
	if q.spec.FellBack {
		res.Spec.Fallbacks++
	}
	res.Streams.Append(s)
	rc.progress.Add(1)
	if cancelAt == 0 {
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
