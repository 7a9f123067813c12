package reports

import (
	"math"
	"strconv"

	"github.com/itlsim/itlsim/sim/quantile"
)

// SchemaVersion is the version of the JSON documents itlsim writes (the
// top-level schema_version): raised when a key changes meaning or goes
// away, not when one is added. 2: distributions carry "n" and are null
// when empty, every summary has "percentiles", runs have "slo" and "vllm".
const SchemaVersion = 2

// VLLM is a run's figures under the keys `vllm bench serve --save-result`
// writes (vllm/benchmarks/serve.py), so notebooks and dashboards built on
// vLLM's results read itlsim's unchanged: duration (s), completed,
// total_input_tokens, total_output_tokens, request_throughput,
// output_throughput, total_token_throughput (per s), request_goodput
// (requests meeting the per-request SLO per s), and for each Vocabulary row
// with a vLLM name (ttft, tpot, itl, e2el) the mean_, median_, std_ and pNN_ (each chosen percentile; p99.9 as
// p99.9) keys in ms. A figure of an empty population is omitted, as vLLM
// writes none without requests.
type VLLM map[string]float64

// vllmBlock builds the run's VLLM block from its summary.
func vllmBlock(s *Summary, pooled *quantile.Histogram) VLLM {
	v := VLLM{
		"duration":               s.DurationS,
		"completed":              float64(s.Finished),
		"total_input_tokens":     float64(s.InputTokens),
		"total_output_tokens":    float64(s.OutputTokens),
		"request_throughput":     s.RequestsPerS,
		"output_throughput":      s.OutputTokensPerS,
		"total_token_throughput": s.InputTokensPerS + s.OutputTokensPerS,
		"request_goodput":        s.SLOGoodputPerS,
	}
	for _, m := range Vocabulary {
		if m.VLLM == "" {
			continue
		}
		d := m.Dist(s)
		if d.N == 0 {
			continue
		}
		v["mean_"+m.VLLM+"_ms"] = d.Mean
		v["median_"+m.VLLM+"_ms"] = d.P50
		if std, ok := s.std(m.Pop, pooled); ok {
			v["std_"+m.VLLM+"_ms"] = std
		}
		for _, q := range d.Q {
			v["p"+strconv.FormatFloat(q.P, 'f', -1, 64)+"_"+m.VLLM+"_ms"] = q.V
		}
	}
	return v
}

// std is the population standard deviation of p in ms (numpy's, as vLLM
// uses), from the kept population or, for a simulation's pooled ITL, its
// histogram.
func (s *Summary) std(p Population, pooled *quantile.Histogram) (float64, bool) {
	if p == PopITL && pooled != nil && pooled.N > 0 && (s.pops == nil || s.pops.sorted[PopITL] == nil) {
		return ms(pooled.Std()), true
	}
	if s.pops == nil || s.pops.dists[p].N == 0 {
		return 0, false
	}
	return s.pops.std[p], true
}

// stdOf is the population standard deviation of xs (0 when empty).
func stdOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum, ss float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)))
}
