package sim

import "github.com/itlsim/itlsim/sim/quantile"

// ended is a stream that ended, as reducing it to its summary, timeline
// and worst-stream entry needs it once its request slot is reused: the
// engine fills one per ended request (recorder.end, reject) and reduce
// does the rest, either at once or, during Engine.Run, on the finisher's
// goroutine. The order of reductions is the order requests end, so the
// results are the same either way.
type ended struct {
	rc     *recorder
	s      StreamSummary // all but the gap statistics reduce adds
	reject bool          // rejected: no chunks, s says why
	abort  string        // why Engine.Abort ended it ("": it was not aborted)
	offer  bool          // hand the timeline to the sink and the worst list (server view)
	first  Time          // the first chunk's time
	chunks int           // chunks the timeline shows
	shown  int           // gaps the timeline shows (a cancel's last gap is no chunk)
	multi  bool          // tok holds every chunk's tokens
	gaps   []int64       // every gap, ns
	tok    []int32
	stalls []Stall
}

// tokensOf is the number of tokens of chunk i.
func (x *ended) tokensOf(i int) int {
	if !x.multi {
		return 1
	}
	return int(x.tok[i])
}

// reduce adds x to its recorder's results: the timeline to the sink and
// the worst list, the gap statistics to its summary, the summary to the
// streams. t is timeline scratch.
func (x *ended) reduce(t *Timeline) {
	rc, s := x.rc, &x.s
	if x.reject {
		rc.res.Streams.Append(*s)
		if rc.sink != nil {
			rc.sinkNoChunks(s.ID, s.Arrival, s.InputTokens, s.Status, s.Reject, "")
		}
		return
	}
	if x.offer {
		if x.chunks == 0 && (s.Status == StatusCancelled || x.abort != "") && rc.sink != nil {
			// Aborted before its first chunk: the sink still hears of it.
			rc.sinkNoChunks(s.ID, s.Arrival, s.InputTokens, s.Status, 0, x.abort)
		}
		rc.offerTimeline(x, t)
	}
	if g := x.gaps; len(g) > 0 {
		var sum int64
		for _, v := range g {
			sum += v
		}
		s.GapMean = float64(sum) / float64(len(g))
		var mx int64
		s.GapP50, s.GapP90, s.GapP99, mx = quantile.StreamStats(g)
		s.GapMax = Time(mx)
	}
	rc.res.Streams.Append(*s)
}

// endBatchLen is how many ended streams the engine hands the finisher at
// once: one channel exchange per batch, a few per simulated second.
const endBatchLen = 32

// endBatches bounds the batches in flight, and so the memory the
// finisher holds: endBatches·endBatchLen streams' gaps at most.
const endBatches = 4

type endBatch struct {
	n    int
	jobs [endBatchLen]ended
}

// finisher reduces ended streams on a goroutine of its own while the
// engine simulates on: scoring a stream (its gap percentiles, and the
// perceived-quality sink's scores) costs as much as simulating it. It
// sees the streams in the order they ended, as a plain run would, so its
// results are the same bytes; the engine waits for it only when every
// batch is in flight, and drains it when the run ends (stop). It runs
// only for Engine.Run, only without a delivery path or an observer (the
// client's view and the live observer read results as streams end).
type finisher struct {
	cur  *endBatch
	work chan *endBatch
	free chan *endBatch
	done chan struct{}
}

func startFinisher() *finisher {
	f := &finisher{work: make(chan *endBatch, endBatches), free: make(chan *endBatch, endBatches), done: make(chan struct{})}
	for range endBatches {
		f.free <- new(endBatch)
	}
	go func() {
		var t Timeline
		for b := range f.work {
			for i := range b.n {
				b.jobs[i].reduce(&t)
			}
			b.n = 0
			f.free <- b
		}
		close(f.done)
	}()
	return f
}

// next is the entry for the next ended stream; commit hands it over.
func (f *finisher) next() *ended {
	if f.cur == nil {
		f.cur = <-f.free
	}
	return &f.cur.jobs[f.cur.n]
}

func (f *finisher) commit() {
	if f.cur.n++; f.cur.n == endBatchLen {
		f.work <- f.cur
		f.cur = nil
	}
}

// stop hands over the last batch and waits until every stream is reduced.
func (f *finisher) stop() {
	if f.cur != nil && f.cur.n > 0 {
		f.work <- f.cur
	}
	f.cur = nil
	close(f.work)
	<-f.done
}
