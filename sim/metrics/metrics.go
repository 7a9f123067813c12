package metrics

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Config holds the thresholds results are judged by.
type Config struct {
	// StallThresholdMS: a gap longer than this is a stall and is attributed
	// to causes in the stall table. Default 250.
	StallThresholdMS float64 `yaml:"stall_threshold_ms" json:"stall_threshold_ms"`
	// ITLGoodputMS (θ): a finished stream counts toward ITL goodput when its
	// largest gap is at most this. Default 400.
	ITLGoodputMS float64 `yaml:"itl_goodput_ms" json:"itl_goodput_ms"`
	// UnstableJitter: a stream whose p99/p50 gap ratio exceeds this is
	// unstable. Default 5.
	UnstableJitter float64 `yaml:"unstable_jitter" json:"unstable_jitter"`
	// SLO limits for SLO goodput (vLLM --goodput semantics); 0 = no limit on
	// that metric. A class's own limits replace these for its requests.
	SLO SLO `yaml:"slo" json:"slo"`
	// Percentiles are the percentiles (in (0, 100)) that tables, the JSON
	// summary and the gate's metric names show. Default 50, 90, 95, 99.
	Percentiles Percentiles `yaml:"percentiles" json:"percentiles"`
	// QoE is what a person watching a stream expects, for the QoE and
	// fluidity scores; a class's own expectation replaces it.
	QoE QoE `yaml:"qoe" json:"qoe"`
	// WorstStreams is how many streams with the largest gaps keep their
	// whole timeline for reports. Default 10.
	WorstStreams int `yaml:"worst_streams" json:"worst_streams"`
	// TimeseriesIntervalS is the width of a time-series bucket in simulated
	// seconds; it doubles as needed to keep at most 1024 buckets. Default 1.
	TimeseriesIntervalS float64 `yaml:"timeseries_interval_s" json:"timeseries_interval_s"`
}

// SLO holds per-request limits in milliseconds; 0 means no limit. A
// request meets the SLO when it meets every limit given: TTFT, TPOT and
// E2EL as vLLM's --goodput, and the stream's own p99 gap and largest gap.
type SLO struct {
	TTFTMS float64 `yaml:"ttft_ms" json:"ttft_ms"`
	TPOTMS float64 `yaml:"tpot_ms" json:"tpot_ms"`
	E2ELMS float64 `yaml:"e2el_ms" json:"e2el_ms"`
	// StreamP99ITLMS limits the stream's p99 gap, StreamMaxGapMS its
	// largest gap (a stream of one chunk has none and meets both).
	StreamP99ITLMS float64 `yaml:"stream_p99_itl_ms" json:"stream_p99_itl_ms"`
	StreamMaxGapMS float64 `yaml:"stream_max_gap_ms" json:"stream_max_gap_ms"`
}

// IsZero reports whether no limit is set.
func (s SLO) IsZero() bool { return s == SLO{} }

// QoE is the delivery a person expects from a stream: the first token
// after ExpectedTTFTMS and then TokensPerS tokens a second, the pace they
// read (or listen) at. Andes' QoE scores a stream by how far its delivery
// lags this curve; Etalon's fluidity index by the share of per-token
// deadlines (ExpectedTTFTMS, then one every 1/TokensPerS) it meets.
type QoE struct {
	// ExpectedTTFTMS is the wait for the first token a person accepts, ms.
	// Default 1000.
	ExpectedTTFTMS float64 `yaml:"expected_ttft_ms" json:"expected_ttft_ms"`
	// TokensPerS is the expected delivery speed, tokens/s. Default 6: a
	// reading speed of about 4.5 words/s at 4/3 tokens a word.
	TokensPerS float64 `yaml:"tokens_per_s" json:"tokens_per_s"`
}

// DefaultQoE is the expectation of a person reading a chat answer.
func DefaultQoE() QoE { return QoE{ExpectedTTFTMS: 1000, TokensPerS: 6} }

// Validate names a bad field under prefix (metrics.qoe, workload.classes[i].qoe).
func (q QoE) Validate(prefix string) error {
	switch {
	case !(q.ExpectedTTFTMS >= 0 && q.ExpectedTTFTMS <= 1e9):
		return fmt.Errorf("%s.expected_ttft_ms: must be in [0, 1e9] ms, got %g", prefix, q.ExpectedTTFTMS)
	case !(q.TokensPerS > 0 && q.TokensPerS <= 1e6):
		return fmt.Errorf("%s.tokens_per_s: must be in (0, 1e6] tokens/s, got %g", prefix, q.TokensPerS)
	}
	return nil
}

// Validate checks the thresholds.
func (m Config) Validate() error {
	switch {
	case !(m.StallThresholdMS > 0 && m.StallThresholdMS <= 1e9):
		return fmt.Errorf("metrics.stall_threshold_ms: must be in (0, 1e9] ms, got %g", m.StallThresholdMS)
	case !(m.ITLGoodputMS > 0 && m.ITLGoodputMS <= 1e9):
		return fmt.Errorf("metrics.itl_goodput_ms: must be in (0, 1e9] ms, got %g", m.ITLGoodputMS)
	case !(m.UnstableJitter >= 1 && m.UnstableJitter <= 1e9):
		return fmt.Errorf("metrics.unstable_jitter: must be in [1, 1e9], got %g", m.UnstableJitter)
	case !(m.SLO.TTFTMS >= 0 && m.SLO.TTFTMS <= 1e12):
		return fmt.Errorf("metrics.slo.ttft_ms: must be a limit ≥ 0 ms (0 = none), got %g", m.SLO.TTFTMS)
	case !(m.SLO.TPOTMS >= 0 && m.SLO.TPOTMS <= 1e12):
		return fmt.Errorf("metrics.slo.tpot_ms: must be a limit ≥ 0 ms (0 = none), got %g", m.SLO.TPOTMS)
	case !(m.SLO.E2ELMS >= 0 && m.SLO.E2ELMS <= 1e12):
		return fmt.Errorf("metrics.slo.e2el_ms: must be a limit ≥ 0 ms (0 = none), got %g", m.SLO.E2ELMS)
	case !(m.SLO.StreamP99ITLMS >= 0 && m.SLO.StreamP99ITLMS <= 1e12):
		return fmt.Errorf("metrics.slo.stream_p99_itl_ms: must be a limit ≥ 0 ms (0 = none), got %g", m.SLO.StreamP99ITLMS)
	case !(m.SLO.StreamMaxGapMS >= 0 && m.SLO.StreamMaxGapMS <= 1e12):
		return fmt.Errorf("metrics.slo.stream_max_gap_ms: must be a limit ≥ 0 ms (0 = none), got %g", m.SLO.StreamMaxGapMS)
	case m.WorstStreams < 0 || m.WorstStreams > 10000:
		return fmt.Errorf("metrics.worst_streams: must be in [0,10000], got %d", m.WorstStreams)
	case !(m.TimeseriesIntervalS >= 1e-6 && m.TimeseriesIntervalS <= 1e6):
		return fmt.Errorf("metrics.timeseries_interval_s: must be in [1e-6, 1e6] s, got %g", m.TimeseriesIntervalS)
	case len(m.Percentiles) > 20:
		return fmt.Errorf("metrics.percentiles: at most 20 percentiles, got %d", len(m.Percentiles))
	}
	for i, p := range m.Percentiles {
		if !(p > 0 && p < 100) {
			return fmt.Errorf("metrics.percentiles[%d]: must be in (0, 100), got %g", i, p)
		}
		if i > 0 && p <= m.Percentiles[i-1] {
			return fmt.Errorf("metrics.percentiles[%d]: must be increasing without repeats, got %g after %g", i, p, m.Percentiles[i-1])
		}
	}
	if m.QoE != (QoE{}) {
		return m.QoE.Validate("metrics.qoe")
	}
	return nil
}

// Percentiles are percentiles in (0, 100), increasing. In YAML they are a
// comma-separated scalar ("50,90,95,99") or a sequence.
type Percentiles []float64

// ParsePercentiles reads "50,90,95,99" (p95 also reads as 95): each in
// (0, 100), returned sorted without repeats.
func ParsePercentiles(s string) (Percentiles, error) {
	var out Percentiles
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimPrefix(strings.TrimSpace(f), "p")
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0 && v < 100) {
			return nil, fmt.Errorf("percentile %q: expected a number in (0, 100) such as 95 or 99.9", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("expected a comma-separated list of percentiles such as 50,90,95,99, got %q", s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// String is the comma-separated form.
func (p Percentiles) String() string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// MarshalText writes the comma-separated form (YAML's scalar).
func (p Percentiles) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads the comma-separated form.
func (p *Percentiles) UnmarshalText(b []byte) error {
	v, err := ParsePercentiles(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalJSON writes a JSON array of numbers.
func (p Percentiles) MarshalJSON() ([]byte, error) { return json.Marshal([]float64(p)) }

// UnmarshalJSON reads a JSON array of numbers.
func (p *Percentiles) UnmarshalJSON(b []byte) error {
	var xs []float64
	if err := json.Unmarshal(b, &xs); err != nil {
		return err
	}
	*p = xs
	return nil
}
