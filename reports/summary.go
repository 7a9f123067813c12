package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
)

// Preemptions counts preemptions by mode.
type Preemptions struct {
	Recompute int `json:"recompute"`
	Swap      int `json:"swap"`
	// Pause counts streams paused holding their blocks
	// (scheduler.preemption: pause); absent when none was.
	Pause int `json:"pause,omitempty"`
}

// TierSummary is the prefix cache's hits in one place of the KV memory
// hierarchy (gpu, or an offload tier).
type TierSummary struct {
	Name      string  `json:"name"`
	HitTokens int64   `json:"hit_tokens"`
	HitRate   float64 `json:"hit_rate"`
	// LoadedBlocks, StoredBlocks and DroppedBlocks (offload tiers only)
	// count blocks loaded to the GPU, moved in from the tier above, and
	// moved to the tier below or dropped from the last.
	LoadedBlocks  int64 `json:"loaded_blocks"`
	StoredBlocks  int64 `json:"stored_blocks"`
	DroppedBlocks int64 `json:"dropped_blocks"`
}

// Summary is one run's figures: the "summary" object of the JSON contract.
// Times are milliseconds; shares are in [0,1]. A distribution or share
// whose population is empty (no finished stream, no stream with a gap, no
// request) is undefined: 0 here, null in JSON (MarshalJSON) and n/a in the
// tables, never a measured 0.
type Summary struct {
	Requests int `json:"requests"`
	Finished int `json:"finished"`
	// Cancelled counts streams the failover watchdog aborted on the
	// server (summary_server only; the client view counts them finished).
	Cancelled        int            `json:"cancelled,omitempty"`
	Rejected         int            `json:"rejected"`
	RejectedByReason map[string]int `json:"rejected_by_reason"`
	InputTokens      int64          `json:"input_tokens"`
	OutputTokens     int64          `json:"output_tokens"`
	DurationS        float64        `json:"duration_s"`

	RequestsPerS     float64 `json:"requests_per_s"`
	InputTokensPerS  float64 `json:"input_tokens_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`

	TTFT      Dist `json:"ttft_ms"`
	TPOT      Dist `json:"tpot_ms"`
	E2EL      Dist `json:"e2el_ms"`
	ITLPooled Dist `json:"itl_pooled_ms"`

	StreamsWithGaps     int     `json:"streams_with_gaps"`
	SingleChunkStreams  int     `json:"single_chunk_streams"`
	StreamP50ITL        Spread  `json:"stream_p50_itl_ms"`
	StreamP99ITL        Spread  `json:"stream_p99_itl_ms"`
	StreamMaxGap        Spread  `json:"stream_max_gap_ms"`
	StreamJitter        Spread  `json:"stream_jitter_ratio"`
	UnstableStreamShare float64 `json:"unstable_stream_share"`
	ITLGoodput          float64 `json:"itl_goodput"`
	ITLGoodputMS        float64 `json:"itl_goodput_threshold_ms"`
	SLOGoodput          float64 `json:"slo_goodput"`
	SLOGoodputPerS      float64 `json:"slo_goodput_per_s"`
	// TokensPerSPerUser is each stream's decode speed, (output tokens − 1)
	// / (E2EL − TTFT) in tokens/s, across streams of two tokens or more.
	TokensPerSPerUser Dist `json:"tokens_per_s_per_user"`
	// QoE and Fluidity summarize the streams' perceived scores (Andes' QoE,
	// Etalon's fluidity index) across scored streams.
	QoE      ScoreSummary `json:"qoe"`
	Fluidity ScoreSummary `json:"fluidity"`
	// Percentiles are the percentiles the distributions show.
	Percentiles []float64 `json:"percentiles"`
	// Stable is false when the run never reached a steady state: the
	// waiting queue was still growing at the end of the arrivals, or the
	// requests finished in the second half of the arrivals fell below 95 %
	// of those that arrived in it. Figures of an unstable run depend on its
	// length (the median gap grows with the backlog, so jitter ratios
	// improve); StableNote says why.
	Stable     bool    `json:"stable"`
	StableNote string  `json:"stable_note,omitempty"`
	OfferedRPS float64 `json:"offered_requests_per_s"`
	// AchievedRPS is the finishing rate over the same half of the arrivals.
	AchievedRPS float64 `json:"achieved_requests_per_s"`
	// SLO holds the run's SLO terms judged (see package reports/slo) for
	// the tables; the JSON carries them as the run's slo.
	SLO []SLOOutcome `json:"-"`

	Preemptions    Preemptions `json:"preemptions"`
	PreemptedShare float64     `json:"preempted_stream_share"`
	SwapBytes      int64       `json:"swap_bytes"`
	// PrefixCacheHitRate is prompt tokens found in the prefix cache over
	// prompt tokens looked up (vLLM's prefix cache hit rate); 0 without
	// lookups.
	PrefixCacheHitRate float64 `json:"prefix_cache_hit_rate"`
	PrefixCacheQueried int64   `json:"prefix_cache_queried_tokens"`
	PrefixCacheHits    int64   `json:"prefix_cache_hit_tokens"`
	// PrefixCacheEvictions counts cached KV blocks evicted to make room.
	PrefixCacheEvictions int64 `json:"prefix_cache_evictions"`
	// PrefixCacheTiers splits the prefix cache's hits by where they were
	// found: the GPU first, then each offload tier of kvcache.tiers; absent
	// without tiers. Hit rates share prefix_cache_hit_rate's denominator,
	// so they sum to it.
	PrefixCacheTiers []TierSummary `json:"prefix_cache_tiers,omitempty"`
	// TierLoadBytes are the bytes prefix hits loaded from offload tiers.
	TierLoadBytes int64 `json:"tier_load_bytes,omitempty"`
	// RecomputeTokens are the tokens whose KV recomputed (preempted)
	// requests needed again; RecomputeCachedShare the share of them the
	// prefix cache still held, which the recompute did not compute.
	RecomputeTokens      int64   `json:"recompute_tokens,omitempty"`
	RecomputeCachedShare float64 `json:"recompute_cached_share,omitempty"`
	// SkippedRows counts malformed trace rows workload.skip_bad_rows passed over.
	SkippedRows int `json:"skipped_rows,omitempty"`

	Stalls              int                `json:"stalls"`
	StalledStreamShare  float64            `json:"stalled_stream_share"`
	StallThresholdMS    float64            `json:"stall_threshold_ms"`
	StallMSByCause      map[string]float64 `json:"stall_ms_by_cause"`
	StallStreamsByCause map[string]float64 `json:"stall_stream_share_by_cause"`
	// ITLPerToken is the per-token view: each chunk's gap divided evenly
	// among its tokens. It equals itl_pooled_ms when every chunk is one
	// token; with speculative decoding it is smaller, because a chunk of
	// several tokens counts as several short gaps.
	ITLPerToken Dist `json:"itl_per_token_ms"`
	// Spec is present when speculative decoding is on.
	Spec *SpecSummary `json:"spec,omitempty"`
	// Delivery is present when a delivery path is configured: what it did
	// to the streams on their way to the client.
	Delivery *DeliverySummary `json:"delivery,omitempty"`
	// Server points to the server view's summary for the tables (the JSON
	// carries it as the run's summary_server).
	Server *Summary `json:"-"`
	// ByClass summarizes each traffic class (see ClassSummaries) for the
	// tables; the JSON carries it as the run's classes.
	ByClass map[string]*Summary `json:"-"`
	// SLOLimits says which limits a class summary's slo_goodput used.
	SLOLimits string `json:"slo_limits,omitempty"`
	Steps     int    `json:"steps"`
	KVBlocks  int    `json:"kv_blocks"`
	// Utilization is how much of the GPUs the steps used (see
	// UtilizationOf); absent for measured runs and class summaries.
	Utilization *Utilization `json:"utilization,omitempty"`

	// Failed counts requests that ended in an error (in Requests, never
	// streams), by the error's kind: a measured run's, a delivery path's
	// dropped connections and the streams serve aborted (its client went
	// away: cancelled; the server cut it: write-timeout, drain).
	// The rest are measured runs' only (`itlsim analyze`). GapsUnavailable is set when the source
	// recorded only first and last token times: every per-gap figure
	// (pooled ITL, per-stream gaps, jitter, ITL goodput, stalls) is then 0
	// and means nothing. Measured is set on every measured run: a client
	// sees that a gap was long, not why, so the server-side figures (stall
	// causes, preemptions, swap, steps, KV blocks) are unknown and 0.
	Failed          int            `json:"failed,omitempty"`
	FailedByReason  map[string]int `json:"failed_by_reason,omitempty"`
	GapsUnavailable bool           `json:"gaps_unavailable,omitempty"`
	Measured        bool           `json:"measured,omitempty"`

	// pops keeps the sorted populations for any percentile (SLO terms,
	// gate metrics); nil in a summary read back from JSON.
	pops *populations
}

// ScoreSummary summarizes a per-stream score in [0, 1] across streams.
type ScoreSummary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P10  float64 `json:"p10"`
	P50  float64 `json:"p50"`
	// BelowShare is the share of scored streams below Below (0.9).
	BelowShare float64 `json:"share_below"`
	Below      float64 `json:"below"`
	// FluidRateP10 and FluidRateP50 summarize the streams' fluid token
	// rates, tokens/s (fluidity only).
	FluidRateP10 float64 `json:"fluid_tokens_per_s_p10,omitempty"`
	FluidRateP50 float64 `json:"fluid_tokens_per_s_p50,omitempty"`
	// FluidRateN is how many streams have a fluid token rate: scored
	// streams of two chunks or more (one chunk sets no rate). It is not
	// in the JSON: a summary read back has 0, and the table then reads
	// the two rates (absent, 0: n/a).
	FluidRateN int `json:"-"`
}

// ScoreBelow is the score under which a stream counts as poorly served.
const ScoreBelow = 0.9

// MarshalJSON writes null figures for an empty population.
func (s ScoreSummary) MarshalJSON() ([]byte, error) {
	type plain ScoreSummary
	if s.N > 0 {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		N          int      `json:"n"`
		Mean       *float64 `json:"mean"`
		P10        *float64 `json:"p10"`
		P50        *float64 `json:"p50"`
		BelowShare *float64 `json:"share_below"`
		Below      float64  `json:"below"`
	}{Below: s.Below})
}

func scoreSummary(sorted []float64) ScoreSummary {
	out := ScoreSummary{N: len(sorted), Below: ScoreBelow}
	if len(sorted) == 0 {
		return out
	}
	d := distOf(sorted, []float64{10, 50})
	out.Mean, out.P10, out.P50 = d.Mean, d.Q[0].V, d.Q[1].V
	below, _ := slices.BinarySearch(sorted, ScoreBelow)
	out.BelowShare = float64(below) / float64(len(sorted))
	return out
}

// opt is v, or nil when the population is empty.
func opt(v float64, defined bool) *float64 {
	if !defined || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// MarshalJSON writes the summary with its undefined shares as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	served := s.Finished + s.Cancelled
	gaps := !s.GapsUnavailable
	return json.Marshal(struct {
		plain
		UnstableStreamShare *float64 `json:"unstable_stream_share"`
		ITLGoodput          *float64 `json:"itl_goodput"`
		SLOGoodput          *float64 `json:"slo_goodput"`
		PreemptedShare      *float64 `json:"preempted_stream_share"`
		StalledStreamShare  *float64 `json:"stalled_stream_share"`
	}{
		plain:               plain(s),
		UnstableStreamShare: opt(s.UnstableStreamShare, gaps && s.StreamsWithGaps > 0),
		ITLGoodput:          opt(s.ITLGoodput, gaps && served > 0),
		SLOGoodput:          opt(s.SLOGoodput, s.Requests > 0),
		PreemptedShare:      opt(s.PreemptedShare, served > 0 && !s.Measured),
		StalledStreamShare:  opt(s.StalledStreamShare, gaps && served > 0),
	})
}

// Served is the number of streams the per-stream figures cover: finished
// (and, in the server view, cancelled) ones.
func (s *Summary) Served() int { return s.Finished + s.Cancelled }

// Unserved is the share of requests rejected or failed; undefined (false)
// without requests.
func (s *Summary) Unserved() (float64, bool) {
	if s.Requests == 0 {
		return 0, false
	}
	return float64(s.Rejected+s.Failed) / float64(s.Requests), true
}

func ms(ns float64) float64 { return ns / 1e6 }

func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// DeliverySummary counts the delivery path's events.
type DeliverySummary struct {
	FailedStreams   int     `json:"failed_streams"`
	Failovers       int     `json:"failovers"`
	FailoverSavedMS float64 `json:"failover_saved_ms"` // Σ primary's last token − client's last token over failovers
	CoherenceBreaks int     `json:"coherence_breaks"`
	Losses          int     `json:"losses"`
	Reconnects      int     `json:"reconnects"`
	// StartupDelayMS is the smoothing buffer's mean added start-up delay per stream.
	StartupDelayMS float64 `json:"startup_delay_ms"`
}

// SpecSummary holds speculative decoding's figures.
type SpecSummary struct {
	Method string `json:"method"`
	K      int    `json:"k"`
	// AcceptanceRate is accepted / drafted tokens: vLLM's draft acceptance
	// rate (vllm:spec_decode_num_accepted_tokens over
	// vllm:spec_decode_num_draft_tokens). Drafts after the first rejection
	// count as drafted, so it is below the per-draft α an acceptance model
	// is configured with (iid:0.8 with k = 4 gives about 59 %).
	AcceptanceRate float64 `json:"acceptance_rate"`
	// AcceptancePerVerifiedDraft is accepted / verified tokens, a verified
	// draft being one the target model judged (every accepted one and the
	// first rejected): the quantity an acceptance model's α is (iid:0.8
	// gives about 80 % at any k).
	AcceptancePerVerifiedDraft float64 `json:"acceptance_per_verified_draft"`
	// MeanAcceptanceLength is 1 + accepted / drafts (vLLM's): tokens a
	// verify step yields on average.
	MeanAcceptanceLength float64 `json:"mean_acceptance_length"`
	// TokensPerStep is the tokens a stream gains per decode step, speculating
	// or not (a plain decode yields 1): below the mean acceptance length when
	// fallback or the batch-size rule turns speculation off.
	TokensPerStep float64 `json:"tokens_per_step"`
	// AcceptedByPosition is the acceptance rate of each draft position.
	AcceptedByPosition []float64 `json:"accepted_by_position"`
	// AcceptanceByRegion is the acceptance rate by the region of the
	// response the verify step started in (tenths: 0–10 %, 10–20 %, …), so
	// an out-of-distribution middle shows as a dip; null for a region
	// without verify steps.
	AcceptanceByRegion []*float64 `json:"acceptance_by_region"`
	VerifySteps        int64      `json:"verify_steps"`
	Drafted            int64      `json:"drafted"`
	Accepted           int64      `json:"accepted"`
	DraftS             float64    `json:"draft_s"`
	FallbackStreams    int        `json:"fallback_streams"`
}

// Utilization is a run's (or a replica's) use of its GPUs. MFU is the
// model FLOPs its steps executed over the dense peak FLOP/s (of the dtype
// the GEMMs run at, times tp) over the run; MBU the bytes they moved
// (weights, activations, KV reads and writes) over peak memory bandwidth
// over the run; both from the step cost model's counts (the linear model's
// steps are counted with the roofline's shapes), null when none can count
// them. BusyShare is the share of the run a step was running:
// under continuous batching one decoding stream keeps it near 1.
//
// MFU and MBU are at most 1. A cost model that prices steps faster than
// the GPU's peak (a linear fit's coefficients, a custom GPU) counts more:
// the share is then given as 1, MFUCapped (MBUCapped) says so and
// MFUUncapped (MBUUncapped) holds the share counted; all three are left
// out otherwise.
type Utilization struct {
	MFU         *float64 `json:"mfu"`
	MBU         *float64 `json:"mbu"`
	BusyShare   float64  `json:"busy_share"`
	MFUCapped   bool     `json:"mfu_capped,omitempty"`
	MFUUncapped *float64 `json:"mfu_uncapped,omitempty"`
	MBUCapped   bool     `json:"mbu_capped,omitempty"`
	MBUUncapped *float64 `json:"mbu_uncapped,omitempty"`
}

// UtilizationOf reads w; nil when w covers no time (a measured result).
func UtilizationOf(w *sim.WorkStats) *Utilization {
	if w.SpanNS <= 0 {
		return nil
	}
	u := &Utilization{BusyShare: finite(w.BusyShare())}
	if v, ok := w.MFU(); ok {
		v = finite(v)
		u.MFU = &v
		if raw := finite(w.FLOPs / w.PeakFLOPs); raw > 1 {
			u.MFUCapped, u.MFUUncapped = true, &raw
		}
	}
	if v, ok := w.MBU(); ok {
		v = finite(v)
		u.MBU = &v
		if raw := finite(w.Bytes / w.PeakBytes); raw > 1 {
			u.MBUCapped, u.MBUUncapped = true, &raw
		}
	}
	return u
}

// Summarize computes a run's summary under the thresholds in m. It sorts
// copies, never the result's own slices.
func Summarize(r *sim.Result, m sim.MetricsConfig) Summary {
	return SummarizeWith(r, m, Options{})
}

// Options refine a summary.
type Options struct {
	// ClassSLO[k] holds the SLO limits of the requests of class k (the
	// result's ClassNames[k]) when it has its own; a zero entry (or none)
	// judges the class by the run's limits.
	ClassSLO []sim.SLO
	// FromResult makes the summary draw a population again from the
	// result when a percentile beyond the chosen ones is asked of it
	// (Summary.Percentile, ITLGoodputAt: SLO terms, gate metrics) instead
	// of keeping every population sorted (9 numbers per stream): for a
	// result that outlives the summary and does not change.
	FromResult bool
	// Pops, when not nil, are the only per-stream populations drawn: a
	// summary read for a few SLO terms (a capacity probe's sections)
	// skips drawing and sorting the rest, which read as empty. The
	// counts, shares and pooled ITL are computed as always.
	Pops []Population
}

// SummarizeWith is Summarize with each request judged by its class's SLO
// limits.
func SummarizeWith(r *sim.Result, m sim.MetricsConfig, o Options) Summary {
	return summarize(r, streamSet{r: r, class: -1}, m, o)
}

// summarize summarizes the streams of set with the counters of r (the
// set's result, or a class's share of it).
func summarize(r *sim.Result, set streamSet, m sim.MetricsConfig, o Options) Summary {
	ps := choose(m.Percentiles)
	s := Summary{
		Requests:            r.Requests,
		Finished:            r.Finished,
		Cancelled:           r.Cancelled,
		Rejected:            r.RejectedTotal(),
		RejectedByReason:    map[string]int{},
		InputTokens:         r.InputTokens,
		OutputTokens:        r.OutputTokens,
		DurationS:           r.Duration.Seconds(),
		Preemptions:         Preemptions{Recompute: r.PreemptRecompute, Swap: r.PreemptSwap, Pause: r.PreemptPause},
		SwapBytes:           r.SwapBytes,
		ITLGoodputMS:        m.ITLGoodputMS,
		StallThresholdMS:    m.StallThresholdMS,
		StallMSByCause:      map[string]float64{},
		StallStreamsByCause: map[string]float64{},
		Steps:               r.Steps,
		KVBlocks:            r.KVBlocks,
		Percentiles:         slices.Clone(ps),
		pops:                &populations{},
	}
	if set.class < 0 {
		s.Utilization = UtilizationOf(&r.Work)
	}
	for why, n := range r.Rejected {
		if n > 0 {
			s.RejectedByReason[scheduler.Reason(why).String()] = n
		}
	}
	if d := s.DurationS; d > 0 {
		s.RequestsPerS = float64(r.Finished) / d
		s.InputTokensPerS = float64(r.InputTokens) / d
		s.OutputTokensPerS = float64(r.OutputTokens) / d
	}

	if r.Measured != nil {
		for why, n := range r.Measured.Failed {
			s.Failed += n
			if s.FailedByReason == nil {
				s.FailedByReason = map[string]int{}
			}
			s.FailedByReason[why] += n
		}
		s.GapsUnavailable = r.Measured.NoGaps
		s.Measured = true
	}
	for why, n := range r.Aborted {
		// Streams a live engine aborted (serve: the client went away, or the
		// server cut them): failed requests, as the timelines file has them.
		s.Failed += n
		if s.FailedByReason == nil {
			s.FailedByReason = map[string]int{}
		}
		s.FailedByReason[why] += n
	}
	gapless := noGaps(r)

	good, sloGood, unstable, stalled, preempted := 0, 0, 0, 0, 0
	theta := m.ITLGoodputMS * 1e6
	set.eachServed(func(i int, st *sim.StreamSummary) {
		t := timesOf(set.r, i)
		if st.Preemptions > 0 {
			preempted++
		}
		if st.Stalls > 0 {
			stalled++
		}
		if gapless {
			// Nothing is known of the stream's gaps.
		} else if !st.HasGaps() {
			s.SingleChunkStreams++
			good++
		} else {
			s.StreamsWithGaps++
			if st.Jitter() > m.UnstableJitter {
				unstable++
			}
			if t.maxGap <= theta {
				good++
			}
		}
		limits := m.SLO
		if c := int(st.Class); c >= 0 && c < len(o.ClassSLO) && !o.ClassSLO[c].IsZero() {
			limits = o.ClassSLO[c]
		}
		if meetsSLO(st, t, limits, gapless) {
			sloGood++
		}
	})
	// The per-stream populations, one at a time in one buffer (a million
	// streams' populations are never all held at once); each is kept
	// sorted for later percentiles unless o.FromResult.
	pp := s.pops
	pp.gapless = gapless
	if o.FromResult {
		pp.set = set
	}
	var rateP10, rateP50 float64
	var rateN int
	drawn := []struct {
		p   Population
		use func(sorted []float64, d Dist) // d: the population at the summary's percentiles
	}{
		{PopTTFT, func(_ []float64, d Dist) { s.TTFT = d }},
		{PopTPOT, func(_ []float64, d Dist) { s.TPOT = d }},
		{PopE2EL, func(_ []float64, d Dist) { s.E2EL = d }},
		{popStreamP50ITL, func(_ []float64, d Dist) { s.StreamP50ITL = d }},
		{PopStreamP99ITL, func(_ []float64, d Dist) { s.StreamP99ITL = d }},
		{PopStreamMaxGap, func(_ []float64, d Dist) { s.StreamMaxGap = d }},
		{PopJitter, func(_ []float64, d Dist) { s.StreamJitter = d }},
		{PopTokensPerSPerUser, func(_ []float64, d Dist) { s.TokensPerSPerUser = d }},
		{PopQoE, func(v []float64, _ Dist) { s.QoE = scoreSummary(v) }},
		{PopFluidity, func(v []float64, _ Dist) { s.Fluidity = scoreSummary(v) }},
		{popFluidRate, func(v []float64, _ Dist) {
			rateN = len(v)
			if len(v) > 0 {
				d := distOf(v, []float64{10, 50})
				rateP10, rateP50 = d.Q[0].V, d.Q[1].V
			}
		}},
	}
	if o.Pops != nil {
		drawn = slices.DeleteFunc(drawn, func(d struct {
			p   Population
			use func(sorted []float64, d Dist)
		}) bool {
			return !slices.Contains(o.Pops, d.p)
		})
	}
	// Each population is drawn, sorted and summarized by one of as many
	// goroutines as there are cores, each through a buffer of its own
	// (with o.FromResult one population at a time per goroutine; else
	// each is kept sorted). Each writes its own fields: the same summary.
	workers := min(runtime.GOMAXPROCS(0), len(drawn))
	var next atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf []float64
			for j := int(next.Add(1)) - 1; j < len(drawn); j = int(next.Add(1)) - 1 {
				p := drawn[j].p
				buf = set.fill(p, gapless, buf[:0])
				slices.Sort(buf)
				d := distOf(buf, ps)
				if p < numPops {
					pp.dists[p], pp.std[p] = d, stdOf(buf)
				}
				drawn[j].use(buf, d)
				if p < numPops && !o.FromResult && len(buf) > 0 {
					pp.sorted[p] = slices.Clip(buf)
					buf = nil // kept: the next population takes a new buffer
				}
			}
		})
	}
	wg.Wait()
	s.Fluidity.FluidRateP10, s.Fluidity.FluidRateP50 = rateP10, rateP50
	s.Fluidity.FluidRateN = rateN
	pp.single = s.SingleChunkStreams
	if r.Measured != nil {
		var gaps []float64
		s.ITLPooled, gaps = exactPooled(r, ps)
		pp.sorted[PopITL] = gaps
		pp.dists[PopITL], pp.std[PopITL] = s.ITLPooled, stdOf(gaps)
	} else if h := r.Pooled; h != nil {
		s.ITLPooled = histDist(h, ps)
		pp.pooled = h
	}
	if gapless {
		s.ITLPooled = Dist{}
	}
	s.ITLPerToken = histDist(r.PerToken, ps)
	if sp := &r.Spec; specOn(r) {
		ss := &SpecSummary{Method: r.SpecMethod, K: r.SpecK, VerifySteps: sp.Steps, Drafted: sp.Drafted,
			Accepted: sp.Accepted, DraftS: sp.DraftTime.Seconds(), FallbackStreams: sp.Fallbacks,
			AcceptedByPosition: []float64{}}
		if sp.Drafted > 0 {
			ss.AcceptanceRate = float64(sp.Accepted) / float64(sp.Drafted)
		}
		if sp.Verified > 0 {
			ss.AcceptancePerVerifiedDraft = float64(sp.Accepted) / float64(sp.Verified)
		}
		if sp.Steps > 0 {
			ss.MeanAcceptanceLength = 1 + float64(sp.Accepted)/float64(sp.Steps)
		}
		if sp.DecodeEntries > 0 {
			ss.TokensPerStep = float64(sp.DecodeTokens) / float64(sp.DecodeEntries)
		}
		for j := range r.SpecK {
			if sp.Drafts[j] > 0 {
				ss.AcceptedByPosition = append(ss.AcceptedByPosition, float64(sp.ByPosition[j])/float64(sp.Drafts[j]))
			}
		}
		for j := range sim.SpecRegions {
			var v *float64
			if d := sp.RegionDrafted[j]; d > 0 {
				x := float64(sp.RegionAccepted[j]) / float64(d)
				v = &x
			}
			ss.AcceptanceByRegion = append(ss.AcceptanceByRegion, v)
		}
		s.Spec = ss
	}
	if d := &r.Delivery; d.On {
		ds := &DeliverySummary{FailedStreams: d.Failed, Failovers: d.Failovers, FailoverSavedMS: d.FailoverSaved.MS(),
			CoherenceBreaks: d.CoherenceBreaks, Losses: d.Losses, Reconnects: d.Reconnects}
		if d.Streams > 0 {
			ds.StartupDelayMS = d.StartupDelay.MS() / float64(d.Streams)
		}
		s.Delivery = ds
		if d.Failed > 0 {
			s.Failed += d.Failed
			if s.FailedByReason == nil {
				s.FailedByReason = map[string]int{}
			}
			s.FailedByReason["connection"] += d.Failed
		}
	}
	s.UnstableStreamShare = share(unstable, s.StreamsWithGaps)
	served := r.Finished + r.Cancelled // the streams the per-stream figures cover
	if !gapless {
		s.ITLGoodput = share(good, served)
	}
	s.SLOGoodput = share(sloGood, r.Requests)
	if s.DurationS > 0 {
		s.SLOGoodputPerS = float64(sloGood) / s.DurationS
	}
	s.PreemptedShare = share(preempted, served)
	s.PrefixCacheQueried, s.PrefixCacheHits, s.PrefixCacheEvictions = r.PrefixQueried, r.PrefixHits, r.PrefixEvictions
	s.RecomputeTokens = r.RecomputeTokens
	if r.RecomputeTokens > 0 {
		s.RecomputeCachedShare = float64(r.RecomputeCached) / float64(r.RecomputeTokens)
	}
	s.SkippedRows = r.SkippedRows
	if r.PrefixQueried > 0 {
		s.PrefixCacheHitRate = float64(r.PrefixHits) / float64(r.PrefixQueried)
	}
	if len(r.Tiers) > 0 {
		rate := func(n int64) float64 {
			if r.PrefixQueried == 0 {
				return 0
			}
			return float64(n) / float64(r.PrefixQueried)
		}
		gpu := r.PrefixHits
		for _, t := range r.Tiers {
			gpu -= t.HitTokens
		}
		s.PrefixCacheTiers = append(s.PrefixCacheTiers, TierSummary{Name: "gpu", HitTokens: gpu, HitRate: rate(gpu)})
		for _, t := range r.Tiers {
			s.PrefixCacheTiers = append(s.PrefixCacheTiers, TierSummary{Name: t.Name, HitTokens: t.HitTokens, HitRate: rate(t.HitTokens),
				LoadedBlocks: t.LoadedBlocks, StoredBlocks: t.StoredBlocks, DroppedBlocks: t.DroppedBlocks})
		}
		s.TierLoadBytes = r.TierLoadBytes
	}
	s.StalledStreamShare = share(stalled, served)
	for _, c := range sim.Causes() {
		s.StallMSByCause[c.String()] = ms(float64(r.StallTime[c]))
		s.StallStreamsByCause[c.String()] = share(r.StreamsHit[c], served)
	}
	set.each(func(_ int, st *sim.StreamSummary) { s.Stalls += st.Stalls })
	s.stability(r, set)
	return s
}

func specOn(r *sim.Result) bool { return r.SpecMethod != "" }

// meetsSLO applies vLLM's --goodput rule: every limit given is met; the
// stream's own gap limits too (unknown gaps meet them).
func meetsSLO(st *sim.StreamSummary, t streamTimes, slo sim.SLO, gapless bool) bool {
	if !gapless && st.HasGaps() {
		if slo.StreamP99ITLMS > 0 && ms(st.GapP99) > slo.StreamP99ITLMS {
			return false
		}
		if slo.StreamMaxGapMS > 0 && ms(t.maxGap) > slo.StreamMaxGapMS {
			return false
		}
	}
	if slo.TTFTMS > 0 && ms(t.ttft) > slo.TTFTMS {
		return false
	}
	if slo.TPOTMS > 0 && ms(t.tpot) > slo.TPOTMS {
		return false
	}
	if slo.E2ELMS > 0 && ms(t.e2el) > slo.E2ELMS {
		return false
	}
	return true
}

// finite replaces NaN and ±Inf by 0 so that JSON encoding never fails.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// stability judges whether the run reached a steady state (see
// Summary.Stable): over the second half of the arrival window, the
// admitted requests that finished against those that arrived, and the
// waiting queue of its last quarter against its second quarter. In a
// steady state the two counts differ only by the change of the number in
// flight, whose standard deviation is about √(2L) for L in flight on
// average (Little's law, Poisson arrivals; batching adds to it), so a
// shortfall counts only when it is also beyond 4√(2L). Runs of fewer than 40 admitted arrivals in that
// half are too short to judge and count as stable.
func (s *Summary) stability(r *sim.Result, set streamSet) {
	s.Stable = true
	first, last, n := sim.Time(0), sim.Time(0), 0
	set.each(func(_ int, st *sim.StreamSummary) {
		if st.Status == sim.StatusRejected {
			return
		}
		if n == 0 || st.Arrival < first {
			first = st.Arrival
		}
		last = max(last, st.Arrival)
		n++
	})
	if n < 2 || last <= first {
		return
	}
	mid := first + (last-first)/2
	arrived, done := 0, 0
	var busy float64 // Σ time in flight within [mid, last], ns
	set.each(func(_ int, st *sim.StreamSummary) {
		if st.Status == sim.StatusRejected {
			return
		}
		if st.Arrival >= mid {
			arrived++
		}
		end := st.Arrival + st.E2EL
		if st.Status != sim.StatusFailed && end >= mid && end <= last {
			done++
		}
		if from, to := max(st.Arrival, mid), min(end, last); to > from {
			busy += float64(to - from)
		}
	})
	width := (last - mid).Seconds()
	s.OfferedRPS, s.AchievedRPS = float64(arrived)/width, float64(done)/width
	if arrived < 40 {
		return
	}
	inFlight := busy / float64(last-mid)
	if short := float64(arrived - done); float64(done) < 0.95*float64(arrived) && short > 4*math.Sqrt(2*max(inFlight, 1)) {
		s.Stable = false
		s.StableNote = fmt.Sprintf("over the second half of the arrivals %.2f requests/s finished, below 95 %% of the %.2f/s that arrived: the backlog grew",
			s.AchievedRPS, s.OfferedRPS)
		return
	}
	// The waiting queue, time-weighted, over quarters of the arrival window.
	q := (last - first) / 4
	mean := func(from, to sim.Time) float64 {
		iv := r.Series.Interval
		var sum, w float64
		for i := range r.Series.Buckets {
			b := &r.Series.Buckets[i]
			if b.Start >= from && b.Start+iv <= to {
				sum += b.WaitingNS
				w += float64(iv)
			}
		}
		if w == 0 {
			return 0
		}
		return sum / w
	}
	if q2, q4 := mean(first+q, first+2*q), mean(first+3*q, last); q4 > 2*q2+5 {
		s.Stable = false
		s.StableNote = fmt.Sprintf("the waiting queue grew from %.1f requests in the second quarter of the arrivals to %.1f in the last", q2, q4)
	}
}
