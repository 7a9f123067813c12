package sim

import (
	"slices"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/quantile"
	"github.com/itlsim/itlsim/specdecode"
)

// Histogram resolutions: pooled ITL within 0.1 %, time and position series
// within 1.6 % (they feed charts).
const (
	pooledBits = 10
	seriesBits = 6
	maxBuckets = 1024
	// PositionBuckets is the number of token-position ranges: a gap that
	// ends a chunk whose first token is token j of the response (j ≥ 1;
	// without speculation, the gap between chunks j and j+1) falls in range
	// ⌊log2 j⌋, so ranges are 1, 2–3, 4–7, … and the last holds everything
	// from 2^(PositionBuckets−1).
	PositionBuckets = 16
)

// Status is how a request ended.
type Status uint8

// Statuses.
const (
	StatusFinished Status = iota
	StatusRejected
	// StatusFailed: the server finished the stream but the connection
	// dropped and could not be restored (client view only); or, in an
	// engine driven live, Engine.Abort ended it (serve: its client went
	// away, or the server cut it), with the chunks sent before and the
	// reason counted in Result.Aborted.
	StatusFailed
	// StatusCancelled: the failover watchdog gave up on the stream and the
	// server aborted it; a backup finished it (server view only: the
	// client view counts it finished).
	StatusCancelled
)

func (s Status) String() string {
	switch s {
	case StatusRejected:
		return "rejected"
	case StatusFailed:
		return "failed"
	case StatusCancelled:
		return "cancelled"
	}
	return "finished"
}

// StreamSummary is the fixed-size record a request leaves when it ends.
// Gap statistics use numpy's linear percentiles over the stream's gaps;
// they are NaN-free: a stream with fewer than two chunks has Chunks < 2 and
// zero gap fields.
type StreamSummary struct {
	ID           int
	Arrival      Time
	InputTokens  int
	OutputTokens int     // tokens generated
	TTFT         Time    // first chunk − arrival
	E2EL         Time    // last chunk − arrival
	Chunks       int     // visible updates; gaps = Chunks − 1
	GapMean      float64 // ns
	GapP50       float64 // ns
	GapP90       float64 // ns
	GapP99       float64 // ns
	GapMax       Time
	Stalls       int  // gaps above the stall threshold
	StallTime    Time // Σ of those gaps
	Preemptions  int
	// The small fields share words (a run keeps one summary per request).
	Causes uint32           // bit c set when cause c had a part in one of its stalls
	Status Status           // how it ended
	Reject scheduler.Reason // why it was rejected
	Class  int16            // index into Result.ClassNames; -1 for none
	// Perceived scores, filled in by package reports from the stream's
	// timeline after the run (the engine leaves them zero; Scored false):
	// Andes' QoE and Etalon's fluidity index in [0, 1], and the fluid
	// token rate in tokens/s.
	QoE       float32
	Fluidity  float32
	FluidRate float32
	Scored    bool
}

// HasGaps reports whether the stream has at least one gap.
func (s *StreamSummary) HasGaps() bool { return s.Chunks >= 2 }

// TPOT is vLLM's time per output token, (E2EL − TTFT)/(n − 1), in ns; 0
// for a stream of one token.
func (s *StreamSummary) TPOT() float64 {
	n := s.OutputTokens
	if s.Status == StatusCancelled && n > 0 {
		n++ // its E2EL ends at the abort, which stands for the next token
	}
	return TPOTOf(float64(s.E2EL-s.TTFT), n)
}

// Jitter is the stream's p99/p50 gap ratio; 0 without gaps.
func (s *StreamSummary) Jitter() float64 {
	if !s.HasGaps() || s.GapP50 <= 0 {
		return 0
	}
	return s.GapP99 / s.GapP50
}

// Bucket is one time-series interval. Gauges (running, waiting, ...) are
// time-weighted means over the interval: Σ value × step duration / width.
type Bucket struct {
	Start        Time
	RunningNS    float64 // Σ running sequences × ns
	WaitingNS    float64 // Σ waiting requests × ns
	PreemptedNS  float64 // Σ preempted-and-waiting × ns
	KVUsedNS     float64 // Σ KV utilization × ns
	BusyNS       Time    // Σ step durations
	Steps        int
	BatchTokens  int64 // Σ tokens over its steps
	Preemptions  int
	Finished     int
	OutputTokens int64
	ITL          *quantile.Histogram // gaps that ended in the interval
}

// Series is the time series of one run: Buckets of Interval each.
type Series struct {
	Interval Time
	Buckets  []Bucket
	noITL    bool // buckets carry no ITL histogram (a cluster replica's: the engine's series holds them)
	// spare holds the ITL histograms of buckets a halving merged away,
	// for the buckets created next: a long run halves its series every
	// time it doubles, and would otherwise allocate (and collect) a
	// 20 KB histogram for every new bucket. settle drops them.
	spare []*quantile.Histogram
	// pool is where new buckets' histograms come from when spare is
	// empty, and where spare goes when the series settles (nil: allocate,
	// and drop).
	pool *Spares
}

// settle gives the spare histograms to the pool (or drops them) once the
// series takes no more samples.
func (s *Series) settle() {
	s.pool.give(s.spare...)
	s.spare = nil
}

// Result is everything a run measured, as plain values. Results of
// separate runs of one configuration (shards, replicas) merge with Merge.
type Result struct {
	Name     string
	Streams  Summaries // in the order requests ended
	Pooled   *quantile.Histogram
	Position [PositionBuckets]*quantile.Histogram
	// PositionPerToken is Position in the per-token view: each chunk's gap
	// divided among its tokens.
	PositionPerToken [PositionBuckets]*quantile.Histogram

	StallTime  [NumCauses]Time // Σ parts of stall gaps by cause
	StreamsHit [NumCauses]int  // streams with at least one stall part of the cause
	Rejected   [scheduler.NumReasons]int

	PreemptRecompute int
	PreemptSwap      int
	// PreemptPause counts pauses (scheduler.preemption: pause): a stream
	// left out of one or more consecutive steps, holding its blocks.
	PreemptPause int
	SwapBytes    int64 // bytes copied GPU→CPU and back

	Requests  int
	Finished  int
	Cancelled int // aborted on the server when the failover watchdog fired (server view)
	// Aborted counts the streams Engine.Abort ended (StatusFailed), by the
	// reason its caller gave; nil when none was.
	Aborted      map[string]int
	InputTokens  int64 // prompt tokens of finished requests
	OutputTokens int64
	Steps        int
	Duration     Time // last event
	KVBlocks     int
	Series       Series
	// PrefixQueried and PrefixHits are tokens looked up in the prefix cache
	// by starting requests (a recomputed request looks up its prompt and
	// output) and found there; PrefixEvictions counts evicted KV blocks.
	PrefixQueried   int64
	PrefixHits      int64
	PrefixEvictions int64
	// Tiers are the offload tiers' counters, top first (kvcache.tiers);
	// TierLoadBytes the bytes prefix hits loaded from them.
	Tiers         []TierResult
	TierLoadBytes int64
	// RecomputeTokens are the tokens whose KV requests evicted for
	// recompute needed again when they restarted; RecomputeCached of them
	// were still in the prefix cache and were not computed.
	RecomputeTokens, RecomputeCached int64
	// ClassNames are the traffic classes seen, in order of appearance
	// (configured classes first); ClassPooled their pooled ITL histograms.
	ClassNames  []string
	ClassPooled []*quantile.Histogram
	// PerToken is the per-token view of ITL: each chunk's gap divided
	// evenly among its tokens (differs from Pooled only when chunks carry
	// several tokens, as with speculative decoding).
	PerToken *quantile.Histogram
	// SkippedRows counts malformed trace rows skip_bad_rows passed over.
	SkippedRows int
	// Delivery counts what the delivery path did (client view only).
	Delivery DeliveryStats
	// Spec counts speculative decoding's work; zero when it is off.
	Spec SpecStats
	// SpecMethod and SpecK name the speculation configured ("" when off).
	SpecMethod string
	SpecK      int
	// Worst holds the streams with the largest gaps (metrics.worst_streams
	// of them), worst first, chosen exactly among all finished streams.
	Worst []WorstStream
	// WorstK is how many worst streams the run kept.
	WorstK int
	// Work is what the steps executed and the GPUs could have: the
	// run's utilisation.
	Work WorkStats
	// Measured is set on results imported from measured streams: their
	// exact times, failed requests and what the source did not record.
	Measured *Measured
}

// WorkStats is the work a run's steps executed by the step cost model
// against what its replicas' GPUs could have done over the run; results
// merge by adding them, so shares of a merged result pool its replicas.
type WorkStats struct {
	// FLOPs are the model FLOPs executed; Bytes the bytes moved to and
	// from device memory (weights, activations, KV reads and writes).
	FLOPs, Bytes float64
	// PeakFLOPs and PeakBytes are the replicas' dense peaks (FLOP/s of the
	// dtype the GEMMs run at, memory bandwidth; times tp) times the run's
	// duration; 0 when no step model can count the work (Setup.Work nil).
	PeakFLOPs, PeakBytes float64
	// BusyNS is Σ step time, SpanNS Σ run duration, over the replicas.
	BusyNS, SpanNS Time
}

// MFU is model FLOPs utilisation, FLOPs over PeakFLOPs; ok false when the
// cost model counts no work.
func (w *WorkStats) MFU() (v float64, ok bool) {
	if !(w.PeakFLOPs > 0) {
		return 0, false
	}
	return min(1, w.FLOPs/w.PeakFLOPs), true
}

// MBU is memory bandwidth utilisation, Bytes over PeakBytes; ok false when
// the cost model counts no work.
func (w *WorkStats) MBU() (v float64, ok bool) {
	if !(w.PeakBytes > 0) {
		return 0, false
	}
	return min(1, w.Bytes/w.PeakBytes), true
}

// BusyShare is the share of the run a step was running, over the replicas.
func (w *WorkStats) BusyShare() float64 {
	if w.SpanNS <= 0 {
		return 0
	}
	return min(1, float64(w.BusyNS)/float64(w.SpanNS))
}

func (w *WorkStats) merge(o *WorkStats) {
	w.FLOPs += o.FLOPs
	w.Bytes += o.Bytes
	w.PeakFLOPs += o.PeakFLOPs
	w.PeakBytes += o.PeakBytes
	w.BusyNS += o.BusyNS
	w.SpanNS += o.SpanNS
}

// DeliveryStats counts the delivery path's events over a run's streams.
type DeliveryStats struct {
	On              bool // a delivery path was configured
	Failed          int  // streams a dropped connection ended
	Failovers       int
	FailoverSaved   Time // Σ over failovers: primary's last token − client's last token
	CoherenceBreaks int  // streams finished by a different model than they started on
	Losses          int
	Reconnects      int
	StartupDelay    Time // Σ smoothing start-up delays
	Streams         int  // streams delivered
}

func (d *DeliveryStats) merge(o *DeliveryStats) {
	d.On = d.On || o.On
	d.Failed += o.Failed
	d.Failovers += o.Failovers
	d.FailoverSaved += o.FailoverSaved
	d.CoherenceBreaks += o.CoherenceBreaks
	d.Losses += o.Losses
	d.Reconnects += o.Reconnects
	d.StartupDelay += o.StartupDelay
	d.Streams += o.Streams
}

// SpecStats counts speculative decoding's verify steps and tokens.
type SpecStats struct {
	Steps      int64                  // verify entries: one stream speculating in one step
	Drafted    int64                  // draft tokens proposed
	Accepted   int64                  // draft tokens accepted
	Verified   int64                  // draft tokens verified: the accepted ones and the first rejected (the configured α's denominator)
	Emitted    int64                  // tokens made visible by verify entries (accepted + 1 each)
	Drafts     [specdecode.MaxK]int64 // draft tokens proposed at each position
	ByPosition [specdecode.MaxK]int64 // draft tokens accepted at each position
	DraftTime  Time                   // Σ time steps spent drafting
	// DecodeEntries and DecodeTokens count every decode of a stream in a
	// step (speculating or not) and the tokens they made visible.
	DecodeEntries int64
	DecodeTokens  int64
	Fallbacks     int // streams that fallback stopped at least once
	// RegionDrafted and RegionAccepted count draft tokens proposed and
	// accepted by the region of the response the verify step started in:
	// region r covers generated tokens [r, r+1) × output/SpecRegions.
	RegionDrafted  [SpecRegions]int64
	RegionAccepted [SpecRegions]int64
}

// SpecRegions is the number of equal parts of a response that speculative
// acceptance is counted by (tenths).
const SpecRegions = 10

func (s *SpecStats) merge(o *SpecStats) {
	s.Steps += o.Steps
	s.Drafted += o.Drafted
	s.Accepted += o.Accepted
	s.Verified += o.Verified
	s.Emitted += o.Emitted
	for i := range s.Drafts {
		s.Drafts[i] += o.Drafts[i]
		s.ByPosition[i] += o.ByPosition[i]
	}
	s.DraftTime += o.DraftTime
	s.DecodeEntries += o.DecodeEntries
	s.DecodeTokens += o.DecodeTokens
	s.Fallbacks += o.Fallbacks
	for i := range s.RegionDrafted {
		s.RegionDrafted[i] += o.RegionDrafted[i]
		s.RegionAccepted[i] += o.RegionAccepted[i]
	}
}

func newResult(interval Time) *Result { return newResultFrom(interval, nil) }

// newResultFrom is newResult with its series and by-position histograms
// taken from sp while it has some.
func newResultFrom(interval Time, sp *Spares) *Result {
	r := newResultNoPositions(interval)
	r.Series.pool = sp
	for i := range r.Position {
		r.Position[i] = sp.take()
		r.PositionPerToken[i] = sp.take()
	}
	return r
}

// newResultNoPositions is newResult without the ITL-by-position
// histograms (nil): a cluster replica's, recorded in the engine's set.
func newResultNoPositions(interval Time) *Result {
	return &Result{Pooled: quantile.NewHistogram(pooledBits), PerToken: quantile.NewHistogram(pooledBits), Series: Series{Interval: interval}}
}

// bucket returns the series bucket holding t, merging pairs of buckets and
// doubling the interval when the series would exceed maxBuckets.
func (s *Series) bucket(t Time) *Bucket {
	i := int(t / s.Interval)
	for i >= maxBuckets {
		s.halve()
		i = int(t / s.Interval)
	}
	for len(s.Buckets) <= i {
		b := Bucket{Start: Time(len(s.Buckets)) * s.Interval}
		if n := len(s.spare); n > 0 && !s.noITL {
			b.ITL = s.spare[n-1]
			s.spare = s.spare[:n-1]
			b.ITL.Reset()
		} else if !s.noITL {
			b.ITL = s.pool.take()
		}
		s.Buckets = append(s.Buckets, b)
	}
	return &s.Buckets[i]
}

// spread charges a span of dur from start, during which the gauges held
// the given values, to every bucket it overlaps, in proportion to the
// overlap.
func (s *Series) spread(start, dur Time, running, waiting, preempted, kv float64) {
	end := start.Add(dur)
	for t := start; t < end; {
		b := s.bucket(t)
		next := min(end, b.Start+s.Interval)
		d := next - t
		fd := float64(d)
		b.RunningNS += running * fd
		b.WaitingNS += waiting * fd
		b.PreemptedNS += preempted * fd
		b.KVUsedNS += kv * fd
		b.BusyNS += d
		t = next
	}
}

func (s *Series) halve() {
	n := (len(s.Buckets) + 1) / 2
	for i := range n {
		a := &s.Buckets[2*i]
		if 2*i+1 < len(s.Buckets) {
			o := &s.Buckets[2*i+1]
			a.merge(o)
			if o.ITL != nil {
				s.spare = append(s.spare, o.ITL)
			}
		}
		a.Start = Time(i) * 2 * s.Interval
		s.Buckets[i] = *a
	}
	clear(s.Buckets[n:])
	s.Buckets = s.Buckets[:n]
	s.Interval *= 2
}

func (b *Bucket) merge(o *Bucket) {
	b.RunningNS += o.RunningNS
	b.WaitingNS += o.WaitingNS
	b.PreemptedNS += o.PreemptedNS
	b.KVUsedNS += o.KVUsedNS
	b.BusyNS += o.BusyNS
	b.Steps += o.Steps
	b.BatchTokens += o.BatchTokens
	b.Preemptions += o.Preemptions
	b.Finished += o.Finished
	b.OutputTokens += o.OutputTokens
	if o.ITL != nil { // nil: a cluster replica's bucket
		b.ITL.Merge(o.ITL)
	}
}

// Merge adds o's streams and counters to r (replicas of one deployment, or
// shards of one workload). Time series merge bucket by bucket at r's
// interval; o's buckets must use the same interval.
func (r *Result) Merge(o *Result) {
	// Classes merge by name: o's indexes are mapped onto r's.
	remap := make([]int16, len(o.ClassNames))
	for i, name := range o.ClassNames {
		j := slices.Index(r.ClassNames, name)
		if j < 0 {
			j = len(r.ClassNames)
			r.ClassNames = append(r.ClassNames, name)
			r.ClassPooled = append(r.ClassPooled, quantile.NewHistogram(pooledBits))
		}
		r.ClassPooled[j].Merge(o.ClassPooled[i])
		remap[i] = int16(j)
	}
	for _, st := range o.Streams.All() {
		c := *st
		if c.Class >= 0 && int(c.Class) < len(remap) {
			c.Class = remap[c.Class]
		}
		r.Streams.Append(c)
	}
	r.Pooled.Merge(o.Pooled)
	r.PerToken.Merge(o.PerToken)
	r.Spec.merge(&o.Spec)
	r.Work.merge(&o.Work)
	r.Delivery.merge(&o.Delivery)
	r.SkippedRows += o.SkippedRows
	r.PrefixQueried += o.PrefixQueried
	r.PrefixHits += o.PrefixHits
	r.PrefixEvictions += o.PrefixEvictions
	r.TierLoadBytes += o.TierLoadBytes
	for _, t := range o.Tiers {
		i := slices.IndexFunc(r.Tiers, func(u TierResult) bool { return u.Name == t.Name })
		if i < 0 {
			r.Tiers = append(r.Tiers, TierResult{Name: t.Name})
			i = len(r.Tiers) - 1
		}
		u := &r.Tiers[i]
		u.HitTokens += t.HitTokens
		u.LoadedBlocks += t.LoadedBlocks
		u.StoredBlocks += t.StoredBlocks
		u.DroppedBlocks += t.DroppedBlocks
		u.SkippedBlocks += t.SkippedBlocks
	}
	r.RecomputeTokens += o.RecomputeTokens
	r.RecomputeCached += o.RecomputeCached
	if r.SpecMethod == "" {
		r.SpecMethod, r.SpecK = o.SpecMethod, o.SpecK
	}
	for i := range r.Position {
		if o.Position[i] != nil { // nil: a cluster replica's, recorded in the engine's set
			r.Position[i].Merge(o.Position[i])
			r.PositionPerToken[i].Merge(o.PositionPerToken[i])
		}
	}
	for i := range r.StallTime {
		r.StallTime[i] += o.StallTime[i]
		r.StreamsHit[i] += o.StreamsHit[i]
	}
	for i := range r.Rejected {
		r.Rejected[i] += o.Rejected[i]
	}
	r.PreemptRecompute += o.PreemptRecompute
	r.PreemptSwap += o.PreemptSwap
	r.PreemptPause += o.PreemptPause
	r.SwapBytes += o.SwapBytes
	r.Requests += o.Requests
	r.Finished += o.Finished
	r.Cancelled += o.Cancelled
	for why, n := range o.Aborted {
		if r.Aborted == nil {
			r.Aborted = map[string]int{}
		}
		r.Aborted[why] += n
	}
	r.InputTokens += o.InputTokens
	r.OutputTokens += o.OutputTokens
	r.Steps += o.Steps
	r.Duration = max(r.Duration, o.Duration)
	r.KVBlocks += o.KVBlocks
	r.WorstK = max(r.WorstK, o.WorstK)
	r.Worst = mergeWorst(r.Worst, o.Worst, r.WorstK)
	for r.Series.Interval < o.Series.Interval {
		r.Series.halve()
	}
	for i := range o.Series.Buckets {
		ob := o.Series.Buckets[i]
		r.Series.bucket(ob.Start).merge(&ob)
	}
	r.Series.settle()
}

// RejectedTotal is the number of rejected requests.
func (r *Result) RejectedTotal() int {
	n := 0
	for _, v := range r.Rejected {
		n += v
	}
	return n
}

// TierResult is one offload tier's counters over a run.
type TierResult struct {
	Name          string
	HitTokens     int64 // tokens prefix lookups found in the tier (counted in PrefixHits too)
	LoadedBlocks  int64 // blocks loaded from the tier to the GPU
	StoredBlocks  int64 // blocks moved into the tier from the one above
	DroppedBlocks int64 // blocks moved out to the tier below, or dropped from the last
	SkippedBlocks int64 // blocks passed straight down (swap space held all of the cpu tier)
}
