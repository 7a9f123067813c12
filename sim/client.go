package sim

import (
	"fmt"
	"math"

	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/sim/quantile"
)

// clientView turns finished server-side streams into what their clients
// saw, through the delivery path (package delivery), and keeps the
// client-side result. It exists only when a delivery path is configured;
// its buffers are reused stream after stream.
type clientView struct {
	path     *delivery.Path
	res      *Result
	st       delivery.Stream
	req      delivery.Request
	out      delivery.Result
	gaps     []int64
	parts    parts // scratch: the current client gap's split
	timeline Timeline
}

// deliveryCause maps the delivery path's causes onto the engine's.
var deliveryCause = [delivery.NumCauses]Cause{
	delivery.CauseNetwork:        CauseNetwork,
	delivery.CausePacketLoss:     CausePacketLoss,
	delivery.CauseConnection:     CauseConnection,
	delivery.CauseSmoothingDelay: CauseSmoothingDelay,
	delivery.CauseFailover:       CauseFailover,
}

func newClientView(path *delivery.Path, interval Time, sp *Spares) *clientView {
	r := newResultFrom(interval, sp)
	r.Delivery.On = true
	return &clientView{path: path, res: r}
}

// deliver runs a finished stream, or one the server cancelled at cancelAt
// (0: not cancelled), through the delivery path and records the client's
// view of it. It must run before the stream's gaps are sorted.
func (rc *recorder) deliver(q *request, cancelAt Time) {
	cv := rc.client
	cv.req.Seed, cv.req.Arrival, cv.req.PromptTokens = q.seed, int64(q.arrival), q.seq.Prompt
	cv.req.CancelledAt, cv.req.Output = int64(cancelAt), q.seq.Output
	cv.req.PartsOver = int64(rc.stall) // only stalls are split by cause (clientParts)
	ch := cv.req.Chunks[:0]
	if q.chunks > 0 {
		ch = append(ch, delivery.Chunk{At: int64(q.first), Tokens: q.tokensOf(0)})
		at := q.first
		for i, g := range q.gaps {
			at += Time(g)
			ch = append(ch, delivery.Chunk{At: int64(at), Tokens: q.tokensOf(i + 1)})
		}
	}
	cv.req.Chunks = ch
	o := &cv.out
	path := cv.path
	if c := int(q.class); c >= 0 && c < len(rc.classDelivery) && rc.classDelivery[c] != nil {
		path = rc.classDelivery[c] // the class's own delivery settings
	}
	path.Deliver(&cv.st, cv.req, o)

	res := cv.res
	s := StreamSummary{ID: q.seq.ID, Arrival: q.arrival, InputTokens: q.seq.Prompt, OutputTokens: o.Tokens,
		Status: StatusFinished, Class: q.class, Preemptions: q.preemptions, Chunks: len(o.Client)}
	if o.Failed {
		s.Status = StatusFailed
		res.Delivery.Failed++
	}
	d := &res.Delivery
	d.Streams++
	d.Losses += o.Losses
	d.Reconnects += o.Reconnects
	d.Failovers += o.Failovers
	d.FailoverSaved += Time(o.FailoverSaved)
	d.StartupDelay += Time(o.StartupDelay)
	if o.CoherenceBreak {
		d.CoherenceBreaks++
	}
	if len(o.Client) == 0 {
		res.Streams.Append(s)
		if rc.sink != nil {
			rc.sinkNoChunks(q.seq.ID, q.arrival, q.seq.Prompt, s.Status, 0, "")
		}
		return
	}
	first, last := Time(o.Client[0].At), Time(o.Client[len(o.Client)-1].At)
	s.TTFT, s.E2EL = first-q.arrival, last-q.arrival
	res.Duration = max(res.Duration, last)

	cv.gaps = cv.gaps[:0]
	tokens := o.Client[0].Tokens
	var stallList []Stall
	var sum int64
	for k := 0; k+1 < len(o.Client); k++ {
		gap := o.Client[k+1].At - o.Client[k].At
		n := max(1, o.Client[k+1].Tokens)
		cv.gaps = append(cv.gaps, gap)
		sum += gap
		res.Pooled.Record(gap)
		res.PerToken.RecordN(gap/int64(n), uint64(n))
		if q.class >= 0 {
			res.ClassPooled[q.class].Record(gap)
		}
		pos := positionOf(tokens)
		res.Position[pos].Record(gap)
		res.PositionPerToken[pos].RecordN(gap/int64(n), uint64(n))
		tokens += n
		if Time(gap) > rc.stall {
			// A gap's split by cause is needed only for stalls (the stall
			// table and the worst streams' timelines), so only they pay for it.
			clientParts(q, o, k, &cv.parts)
			p := &cv.parts
			if t := p.sum(); int64(t) != gap {
				panic(fmt.Sprintf("sim: request %d: client gap %d ns but its parts sum to %d ns", q.seq.ID, gap, t))
			}
			s.Stalls++
			s.StallTime += Time(gap)
			for c, v := range p {
				if v > 0 {
					res.StallTime[c] += v
					s.Causes |= 1 << c
				}
			}
			if rc.worstK > 0 || rc.sink != nil {
				stallList = append(stallList, Stall{Index: k + 1, Gap: Time(gap), Parts: *p})
			}
		}
	}
	for c := range NumCauses {
		if s.Causes&(1<<c) != 0 {
			res.StreamsHit[c]++
		}
	}
	if rc.worstK > 0 || rc.sink != nil {
		t := &cv.timeline
		t.ID, t.Arrival, t.InputTokens, t.OutputTokens = q.seq.ID, q.arrival, q.seq.Prompt, o.Tokens
		if t.Status = StatusFinished; o.Failed {
			t.Status = StatusFailed
		}
		t.Chunks = t.Chunks[:0]
		for _, c := range o.Client {
			t.Chunks = append(t.Chunks, Chunk{At: Time(c.At), Tokens: c.Tokens})
		}
		t.Stalls = stallList
		if rc.sink != nil {
			rc.sink.Stream(t)
		}
		var maxGap int64
		for _, g := range cv.gaps {
			maxGap = max(maxGap, g)
		}
		res.Worst = offerWorst(res.Worst, rc.worstK, t, Time(maxGap))
	}
	if g := cv.gaps; len(g) > 0 {
		s.GapMean = float64(sum) / float64(len(g))
		var mx int64
		s.GapP50, s.GapP90, s.GapP99, mx = quantile.StreamStats(g)
		s.GapMax = Time(mx)
	}
	res.Streams.Append(s)
	if !o.Failed {
		res.Finished++
		res.InputTokens += int64(q.seq.Prompt)
	}
	res.OutputTokens += int64(o.Tokens)
}

// clientParts splits client gap k by cause: the path's own causes as the
// delivery path reports them, and its server part by the causes of the
// server gap it is a share of, in proportion (largest part takes the
// rounding), so the parts sum exactly to the gap.
func clientParts(q *request, o *delivery.Result, k int, p *parts) {
	*p = parts{}
	row := &o.Parts[k]
	for c, v := range row {
		if c != int(delivery.CauseServer) {
			p[deliveryCause[c]] += Time(v)
		}
	}
	server := Time(row[delivery.CauseServer])
	if server == 0 {
		return
	}
	j := int(o.ServerFirst[k+1])
	if j < 0 {
		j = o.FailoverBefore
	}
	if j < 1 || j-1 >= len(q.gapCause) {
		p[CauseDecode] += server
		return
	}
	sh := q.gapShares(j - 1)
	src := &sh
	var total, nonzero int
	only := CauseDecode
	for c, v := range src {
		if v != 0 {
			total += int(v)
			nonzero++
			only = Cause(c)
		}
	}
	if nonzero == 1 { // the common case: one cause explains the server gap
		p[only] += server
		return
	}
	if total <= 0 {
		p[CauseDecode] += server
		return
	}
	var given Time
	big := CauseDecode
	for c, v := range src {
		if v == 0 {
			continue
		}
		share := Time(math.Floor(float64(server) * float64(v) / float64(total)))
		p[c] += share
		given += share
		if v > src[big] {
			big = Cause(c)
		}
	}
	p[big] += server - given
}

// finishClient copies the run-wide, server-side counters into the client
// result, which then stands for the run.
func (rc *recorder) finishClient() {
	c, s := rc.client.res, rc.res
	c.Name, c.Requests, c.Rejected = s.Name, s.Requests, s.Rejected
	c.PreemptRecompute, c.PreemptSwap, c.PreemptPause, c.SwapBytes = s.PreemptRecompute, s.PreemptSwap, s.PreemptPause, s.SwapBytes
	c.Steps, c.KVBlocks, c.Series = s.Steps, s.KVBlocks, s.Series
	c.Duration = max(c.Duration, s.Duration)
	c.Spec, c.SpecMethod, c.SpecK = s.Spec, s.SpecMethod, s.SpecK
	c.Work = s.Work
	c.PrefixQueried, c.PrefixHits, c.PrefixEvictions = s.PrefixQueried, s.PrefixHits, s.PrefixEvictions
	c.Tiers, c.TierLoadBytes, c.PreemptPause = s.Tiers, s.TierLoadBytes, s.PreemptPause
	c.ClassNames, c.WorstK, c.SkippedRows = s.ClassNames, s.WorstK, s.SkippedRows
	for len(c.ClassPooled) < len(c.ClassNames) {
		c.ClassPooled = append(c.ClassPooled, quantile.NewHistogram(pooledBits))
	}
}
