package reports

import (
	"math"
	"slices"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

// Dist summarizes a latency distribution in milliseconds.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Spread summarizes a per-stream statistic across streams.
type Spread struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Preemptions counts preemptions by mode.
type Preemptions struct {
	Recompute int `json:"recompute"`
	Swap      int `json:"swap"`
}

// Summary is one run's figures: the "summary" object of the JSON contract.
// Times are milliseconds; shares are in [0,1]. Fields whose population is
// empty are 0.
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

	// Measured runs only (`itlsim analyze`); absent for simulations.
	// Failed counts requests that ended in an error (in Requests, never
	// streams), by the error's kind. GapsUnavailable is set when the source
	// recorded only first and last token times: every per-gap figure
	// (pooled ITL, per-stream gaps, jitter, ITL goodput, stalls) is then 0
	// and means nothing. Measured is set on every measured run: a client
	// sees that a gap was long, not why, so the server-side figures (stall
	// causes, preemptions, swap, steps, KV blocks) are unknown and 0.
	Failed          int            `json:"failed,omitempty"`
	FailedByReason  map[string]int `json:"failed_by_reason,omitempty"`
	GapsUnavailable bool           `json:"gaps_unavailable,omitempty"`
	Measured        bool           `json:"measured,omitempty"`
}

func ms(ns float64) float64 { return ns / 1e6 }

func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func distOf(sorted []float64) Dist {
	if len(sorted) == 0 {
		return Dist{}
	}
	var s float64
	for _, v := range sorted {
		s += v
	}
	return Dist{
		Mean: s / float64(len(sorted)),
		P50:  quantile.Linear(sorted, 0.50),
		P90:  quantile.Linear(sorted, 0.90),
		P99:  quantile.Linear(sorted, 0.99),
		Max:  sorted[len(sorted)-1],
	}
}

func spreadOf(sorted []float64) Spread {
	d := distOf(sorted)
	return Spread{P50: d.P50, P90: d.P90, P99: d.P99, Max: d.Max}
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
	// AcceptanceRate is accepted / drafted tokens.
	AcceptanceRate float64 `json:"acceptance_rate"`
	// MeanAcceptanceLength is 1 + accepted / drafts (vLLM's): tokens a
	// verify step yields on average.
	MeanAcceptanceLength float64 `json:"mean_acceptance_length"`
	// TokensPerStep is the tokens a stream gains per decode step, speculating
	// or not (a plain decode yields 1): below the mean acceptance length when
	// fallback or the batch-size rule turns speculation off.
	TokensPerStep float64 `json:"tokens_per_step"`
	// AcceptedByPosition is the acceptance rate of each draft position.
	AcceptedByPosition []float64 `json:"accepted_by_position"`
	VerifySteps        int64     `json:"verify_steps"`
	Drafted            int64     `json:"drafted"`
	Accepted           int64     `json:"accepted"`
	DraftS             float64   `json:"draft_s"`
	FallbackStreams    int       `json:"fallback_streams"`
}

// Summarize computes a run's summary under the thresholds in m. It sorts
// copies, never the result's own slices.
func Summarize(r *sim.Result, m sim.MetricsConfig) Summary {
	s := Summary{
		Requests:            r.Requests,
		Finished:            r.Finished,
		Cancelled:           r.Cancelled,
		Rejected:            r.RejectedTotal(),
		RejectedByReason:    map[string]int{},
		InputTokens:         r.InputTokens,
		OutputTokens:        r.OutputTokens,
		DurationS:           r.Duration.Seconds(),
		Preemptions:         Preemptions{Recompute: r.PreemptRecompute, Swap: r.PreemptSwap},
		SwapBytes:           r.SwapBytes,
		ITLGoodputMS:        m.ITLGoodputMS,
		StallThresholdMS:    m.StallThresholdMS,
		StallMSByCause:      map[string]float64{},
		StallStreamsByCause: map[string]float64{},
		Steps:               r.Steps,
		KVBlocks:            r.KVBlocks,
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
	gapless := noGaps(r)

	var ttft, tpot, e2el, p50, p99, maxGap, jitter []float64
	good, sloGood, unstable, stalled, preempted := 0, 0, 0, 0, 0
	theta := m.ITLGoodputMS * 1e6
	for i := range r.Streams {
		st := &r.Streams[i]
		// A stream the failover watchdog cancelled (server view) counts with
		// the silence it ended in as its last wait (sim.StatusCancelled).
		if st.Status != sim.StatusFinished && st.Status != sim.StatusCancelled {
			continue
		}
		t := timesOf(r, i)
		ttft = append(ttft, ms(t.ttft))
		e2el = append(e2el, ms(t.e2el))
		if st.OutputTokens >= 2 {
			tpot = append(tpot, ms(t.tpot))
		}
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
			p50 = append(p50, ms(st.GapP50))
			p99 = append(p99, ms(st.GapP99))
			maxGap = append(maxGap, ms(t.maxGap))
			j := st.Jitter()
			jitter = append(jitter, j)
			if j > m.UnstableJitter {
				unstable++
			}
			if t.maxGap <= theta {
				good++
			}
		}
		if meetsSLO(t, m.SLO) {
			sloGood++
		}
	}
	for _, xs := range [][]float64{ttft, tpot, e2el, p50, p99, maxGap, jitter} {
		slices.Sort(xs)
	}
	s.TTFT, s.TPOT, s.E2EL = distOf(ttft), distOf(tpot), distOf(e2el)
	s.StreamP50ITL, s.StreamP99ITL, s.StreamMaxGap, s.StreamJitter = spreadOf(p50), spreadOf(p99), spreadOf(maxGap), spreadOf(jitter)
	if r.Measured != nil {
		s.ITLPooled = exactPooled(r)
	} else if h := r.Pooled; h != nil && h.N > 0 {
		s.ITLPooled = Dist{
			Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)),
			P99: ms(h.Quantile(0.99)), Max: ms(float64(h.Max)),
		}
	}
	if h := r.PerToken; h != nil && h.N > 0 {
		s.ITLPerToken = Dist{
			Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)),
			P99: ms(h.Quantile(0.99)), Max: ms(float64(h.Max)),
		}
	}
	if sp := &r.Spec; specOn(r) {
		ss := &SpecSummary{Method: r.SpecMethod, K: r.SpecK, VerifySteps: sp.Steps, Drafted: sp.Drafted,
			Accepted: sp.Accepted, DraftS: sp.DraftTime.Seconds(), FallbackStreams: sp.Fallbacks,
			AcceptedByPosition: []float64{}}
		if sp.Drafted > 0 {
			ss.AcceptanceRate = float64(sp.Accepted) / float64(sp.Drafted)
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
	s.StalledStreamShare = share(stalled, served)
	for _, c := range sim.Causes() {
		s.StallMSByCause[c.String()] = ms(float64(r.StallTime[c]))
		s.StallStreamsByCause[c.String()] = share(r.StreamsHit[c], served)
	}
	for i := range r.Streams {
		s.Stalls += r.Streams[i].Stalls
	}
	return s
}

func specOn(r *sim.Result) bool { return r.SpecMethod != "" }

// meetsSLO applies vLLM's --goodput rule: every limit given is met.
func meetsSLO(t streamTimes, slo sim.SLO) bool {
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
