package cost

import (
	"fmt"
	"math"
)

// Skewed expert routing (RooflineConfig.MoERoutingZipf, MoEExpertLoad).
//
// Expert i receives the share p_i of a step's routed (token, expert) rows:
// (i+1)^−s normalized for a Zipf exponent s, or the measured load
// normalized. A token picks k distinct experts, so it reaches expert i with
// probability q_i = k·p_i, which cannot exceed 1: shares above 1/k are
// capped there and the excess goes to the others in proportion (the
// uniform share 1/E is always below the cap). Tokens route independently,
// so a step of m tokens touches
//
//	D(m) = Σ_i 1 − (1 − q_i)^m
//
// distinct experts, which is E·(1 − (1 − k/E)^m) under uniform routing and
// fewer when a few experts take most rows: the weight bytes a step reads
// shrink. With expert parallelism the G GPUs hold contiguous blocks of E/G
// experts (vLLM's default placement), so GPU g receives the share P_g =
// Σ_{i on g} p_i of the T·k rows; the busiest GPU is taken as max_g μ_g +
// σ_g·√(2 ln G), μ_g = T·k·P_g, σ_g² = μ_g(1 − P_g) (the uniform formula
// of BusiestRows at P_g = 1/G), at most T·k. A Zipf skew in expert order
// puts the hottest experts together on GPU 0: the largest imbalance that
// exponent can give, the case expert-placement load balancing (EPLB, not
// modelled) exists for; a measured load keeps its experts' real order.
type routing struct {
	skewed  bool
	logMiss []float64 // log(1 − q_i) per expert
	// With expert parallelism: the busiest GPU's share of the rows and
	// its experts [lo, hi).
	share  float64
	lo, hi int
	// shares of every GPU (place), for busiestRows.
	ranks []float64
}

// maxZipf bounds MoERoutingZipf: at 4 the first expert already takes 92 %
// of the rows of 256 experts before the 1/k cap.
const maxZipf = 4

// validateRouting checks the routing fields that need no model.
func (c RooflineConfig) validateRouting() error {
	if !(c.MoERoutingZipf >= 0 && c.MoERoutingZipf <= maxZipf) {
		return fmt.Errorf("roofline.moe_routing_zipf: must be in [0,%d] (0: uniform), got %g", maxZipf, c.MoERoutingZipf)
	}
	if len(c.MoEExpertLoad) == 0 {
		return nil
	}
	if c.MoERoutingZipf != 0 {
		return fmt.Errorf("roofline.moe_expert_load: give it or moe_routing_zipf, not both (zipf %g)", c.MoERoutingZipf)
	}
	sum := 0.0
	for i, v := range c.MoEExpertLoad {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("roofline.moe_expert_load[%d]: must be a finite load ≥ 0, got %g", i, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return fmt.Errorf("roofline.moe_expert_load: the loads must sum to a finite value > 0, got %g", sum)
	}
	return nil
}

// newRouting derives the routing of experts experts, topK a token, over
// gpus GPUs of contiguous experts (1: no expert parallelism; see place).
func newRouting(cfg RooflineConfig, experts, topK, gpus int) (routing, error) {
	var p []float64
	switch {
	case len(cfg.MoEExpertLoad) > 0:
		if len(cfg.MoEExpertLoad) != experts {
			return routing{}, fmt.Errorf("roofline.moe_expert_load: has %d entries, the model has %d routed experts", len(cfg.MoEExpertLoad), experts)
		}
		p = append([]float64(nil), cfg.MoEExpertLoad...)
	case cfg.MoERoutingZipf > 0:
		p = make([]float64, experts)
		for i := range p {
			p[i] = math.Pow(float64(i+1), -cfg.MoERoutingZipf)
		}
	default:
		return routing{}, nil
	}
	capShares(p, 1/float64(topK))
	r := routing{skewed: true, logMiss: make([]float64, experts)}
	for i, v := range p {
		r.logMiss[i] = math.Log1p(-min(float64(topK)*v, 1))
	}
	r.place(gpus)
	return r, nil
}

// capShares normalizes p to sum 1 with no share above c (water-filling:
// a capped share's excess goes to the uncapped ones in proportion). c·len(p)
// ≥ 1 always holds here (c = 1/k, k ≤ experts).
func capShares(p []float64, c float64) {
	capped := make([]bool, len(p))
	for range p {
		free, fixed := 0.0, 0.0
		for i, v := range p {
			if capped[i] {
				fixed += c
			} else {
				free += v
			}
		}
		if free <= 0 {
			return
		}
		scale := (1 - fixed) / free
		again := false
		for i := range p {
			if !capped[i] {
				p[i] *= scale
				if p[i] > c {
					p[i], capped[i], again = c, true, true
				}
			}
		}
		if !again {
			return
		}
	}
}

// place splits the experts over gpus GPUs in contiguous blocks and keeps
// every GPU's share of the rows and the busiest GPU's experts.
func (r *routing) place(gpus int) {
	if !r.skewed {
		return
	}
	e := len(r.logMiss)
	shares := make([]float64, e)
	for i, lm := range r.logMiss {
		shares[i] = -math.Expm1(lm) // q_i
	}
	per := max(e/max(gpus, 1), 1)
	r.ranks = r.ranks[:0]
	r.share, r.lo, r.hi = -1, 0, e
	k := 0.0
	for _, q := range shares {
		k += q
	}
	for lo := 0; lo < e; lo += per {
		hi := min(lo+per, e)
		s := 0.0
		for _, q := range shares[lo:hi] {
			s += q
		}
		s /= k
		r.ranks = append(r.ranks, s)
		if s > r.share {
			r.share, r.lo, r.hi = s, lo, hi
		}
	}
}

// distinct is the expected number of experts among [lo, hi) that a step
// of tokens tokens touches.
func (r *routing) distinct(tokens float64, lo, hi int) float64 {
	d := 0.0
	for _, lm := range r.logMiss[lo:hi] {
		d -= math.Expm1(tokens * lm)
	}
	return d
}

// busiestDistinct is distinct over the busiest GPU's experts.
func (r *routing) busiestDistinct(tokens float64) float64 { return r.distinct(tokens, r.lo, r.hi) }

// busiestRows is the busiest GPU's expected rows of a step's rows routed
// rows: max over the GPUs of μ_g + z·σ_g, at most rows.
func (r *routing) busiestRows(rows, z float64) float64 {
	best := 0.0
	for _, s := range r.ranks {
		mu := rows * s
		best = max(best, mu+z*math.Sqrt(mu*(1-s)))
	}
	return min(best, rows)
}
