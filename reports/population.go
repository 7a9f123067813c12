package reports

import (
	"slices"

	"github.com/itlsim/itlsim/sim/quantile"
)

// Population names a per-stream (or per-gap) population of a summary, for
// statistics beyond the chosen percentiles: any percentile of it, its mean,
// min or max (package reports/slo judges SLO terms with them).
type Population int

// Populations.
const (
	PopTTFT              Population = iota // ms, finished streams
	PopTPOT                                // ms, finished streams of ≥ 2 tokens
	PopE2EL                                // ms, finished streams
	PopITL                                 // ms, every gap of every stream (pooled, vLLM's ITL)
	PopStreamP99ITL                        // ms, each stream's p99 gap
	PopStreamMaxGap                        // ms, each stream's largest gap
	PopJitter                              // ratio, each stream's p99/p50 gap
	PopQoE                                 // score, each scored stream's Andes QoE
	PopFluidity                            // score, each scored stream's fluidity index
	PopTokensPerSPerUser                   // tokens/s, each stream's decode speed
	numPops
)

// populations keeps a summary's sorted populations.
type populations struct {
	sorted [numPops][]float64
	pooled *quantile.Histogram // simulations: pooled ITL in ns (PopITL's sorted is nil)
	single int                 // streams of one chunk (no gaps: good for ITL goodput)
}

// Dist returns the summary's distribution of p.
func (s *Summary) Dist(p Population) Dist {
	switch p {
	case PopTTFT:
		return s.TTFT
	case PopTPOT:
		return s.TPOT
	case PopE2EL:
		return s.E2EL
	case PopITL:
		return s.ITLPooled
	case PopStreamP99ITL:
		return s.StreamP99ITL
	case PopStreamMaxGap:
		return s.StreamMaxGap
	case PopJitter:
		return s.StreamJitter
	case PopTokensPerSPerUser:
		return s.TokensPerSPerUser
	case PopQoE, PopFluidity:
		sc := s.QoE
		if p == PopFluidity {
			sc = s.Fluidity
		}
		d := Dist{N: sc.N, Mean: sc.Mean, P50: sc.P50, Q: []Quantile{{10, sc.P10}, {50, sc.P50}}}
		if v := s.sortedOf(p); len(v) > 0 {
			d = distOf(v, s.Percentiles)
		}
		return d
	}
	return Dist{}
}

func (s *Summary) sortedOf(p Population) []float64 {
	if s.pops == nil {
		return nil
	}
	return s.pops.sorted[p]
}

// Percentile returns percentile q (in [0, 100]) of p: exact from the kept
// population, else one of the summary's shown percentiles. false when the
// population is empty or q is not known.
func (s *Summary) Percentile(p Population, q float64) (float64, bool) {
	if s.pops != nil {
		if p == PopITL && s.pops.pooled != nil {
			if s.pops.pooled.N == 0 {
				return 0, false
			}
			return ms(s.pops.pooled.Quantile(q / 100)), true
		}
		if v := s.pops.sorted[p]; v != nil || p != PopITL {
			if len(v) == 0 {
				return 0, false
			}
			return quantile.Linear(v, q/100), true
		}
	}
	d := s.Dist(p)
	switch q {
	case 0:
		return d.Min, d.N > 0
	case 100:
		return d.Max, d.N > 0
	}
	return d.At(q)
}

// ITLGoodputAt is the share of served streams whose largest gap is at
// most thetaMS (streams of one chunk count as good), for a threshold other
// than the run's; false when it cannot be computed (no served stream, no
// gaps recorded, or a summary read from JSON at another threshold).
func (s *Summary) ITLGoodputAt(thetaMS float64) (float64, bool) {
	served := s.Served()
	if served == 0 || s.GapsUnavailable {
		return 0, false
	}
	if thetaMS == s.ITLGoodputMS {
		return s.ITLGoodput, true
	}
	if s.pops == nil {
		return 0, false
	}
	gaps := s.pops.sorted[PopStreamMaxGap]
	n, found := slices.BinarySearch(gaps, thetaMS)
	for found && n < len(gaps) && gaps[n] == thetaMS {
		n++
	}
	return float64(n+s.pops.single) / float64(served), true
}
