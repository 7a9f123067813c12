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
	Requests         int            `json:"requests"`
	Finished         int            `json:"finished"`
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

	Stalls              int                `json:"stalls"`
	StalledStreamShare  float64            `json:"stalled_stream_share"`
	StallThresholdMS    float64            `json:"stall_threshold_ms"`
	StallMSByCause      map[string]float64 `json:"stall_ms_by_cause"`
	StallStreamsByCause map[string]float64 `json:"stall_stream_share_by_cause"`
	Steps               int                `json:"steps"`
	KVBlocks            int                `json:"kv_blocks"`
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

// Summarize computes a run's summary under the thresholds in m. It sorts
// copies, never the result's own slices.
func Summarize(r *sim.Result, m sim.MetricsConfig) Summary {
	s := Summary{
		Requests:            r.Requests,
		Finished:            r.Finished,
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

	var ttft, tpot, e2el, p50, p99, maxGap, jitter []float64
	good, sloGood, unstable, stalled, preempted := 0, 0, 0, 0, 0
	theta := m.ITLGoodputMS * 1e6
	for i := range r.Streams {
		st := &r.Streams[i]
		if st.Status != sim.StatusFinished {
			continue
		}
		ttft = append(ttft, ms(float64(st.TTFT)))
		e2el = append(e2el, ms(float64(st.E2EL)))
		if st.OutputTokens >= 2 {
			tpot = append(tpot, ms(st.TPOT()))
		}
		if st.Preemptions > 0 {
			preempted++
		}
		if st.Stalls > 0 {
			stalled++
		}
		if !st.HasGaps() {
			s.SingleChunkStreams++
			good++
		} else {
			s.StreamsWithGaps++
			p50 = append(p50, ms(st.GapP50))
			p99 = append(p99, ms(st.GapP99))
			maxGap = append(maxGap, ms(float64(st.GapMax)))
			j := st.Jitter()
			jitter = append(jitter, j)
			if j > m.UnstableJitter {
				unstable++
			}
			if float64(st.GapMax) <= theta {
				good++
			}
		}
		if meetsSLO(st, m.SLO) {
			sloGood++
		}
	}
	for _, xs := range [][]float64{ttft, tpot, e2el, p50, p99, maxGap, jitter} {
		slices.Sort(xs)
	}
	s.TTFT, s.TPOT, s.E2EL = distOf(ttft), distOf(tpot), distOf(e2el)
	s.StreamP50ITL, s.StreamP99ITL, s.StreamMaxGap, s.StreamJitter = spreadOf(p50), spreadOf(p99), spreadOf(maxGap), spreadOf(jitter)
	if h := r.Pooled; h.N > 0 {
		s.ITLPooled = Dist{
			Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)),
			P99: ms(h.Quantile(0.99)), Max: ms(float64(h.Max)),
		}
	}
	s.UnstableStreamShare = share(unstable, s.StreamsWithGaps)
	s.ITLGoodput = share(good, r.Finished)
	s.SLOGoodput = share(sloGood, r.Requests)
	if s.DurationS > 0 {
		s.SLOGoodputPerS = float64(sloGood) / s.DurationS
	}
	s.PreemptedShare = share(preempted, r.Finished)
	s.StalledStreamShare = share(stalled, r.Finished)
	for _, c := range sim.Causes() {
		s.StallMSByCause[c.String()] = ms(float64(r.StallTime[c]))
		s.StallStreamsByCause[c.String()] = share(r.StreamsHit[c], r.Finished)
	}
	for i := range r.Streams {
		s.Stalls += r.Streams[i].Stalls
	}
	return s
}

// meetsSLO applies vLLM's --goodput rule: every limit given is met.
func meetsSLO(st *sim.StreamSummary, slo sim.SLO) bool {
	if slo.TTFTMS > 0 && ms(float64(st.TTFT)) > slo.TTFTMS {
		return false
	}
	if slo.TPOTMS > 0 && ms(st.TPOT()) > slo.TPOTMS {
		return false
	}
	if slo.E2ELMS > 0 && ms(float64(st.E2EL)) > slo.E2ELMS {
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
