package study

import (
	"fmt"
	"strconv"

	"github.com/itlsim/itlsim/sim/scenario"
)

// Target turns the question around: the smallest value of an integer
// field (cluster.replicas) at which every SLO term holds at Rate, on
// every seed.
type Target struct {
	Rate float64 // req/s
	// Field is the scenario path searched, e.g. cluster.replicas.
	Field string
	// Max bounds the search; default 1024.
	Max int
}

// TargetResult is a configuration's answer to a Target.
type TargetResult struct {
	Rate  float64 `json:"rate"`
	Field string  `json:"field"`
	// Value is the smallest count found to hold; 0 when even Max does not.
	Value int    `json:"value"`
	Holds bool   `json:"holds"`
	Words string `json:"words"`
	// LimitingTerm is what failed at Value − 1 (or at Max when nothing holds).
	LimitingTerm string `json:"limiting_term"`
	Probes       int    `json:"probes"`
}

// holdsAt probes v with field = n at the target rate on every seed; it
// stops at the first seed that fails.
func (s *Search) holdsAt(v scenario.Variant, t Target, n int) (bool, string, []Point, error) {
	cfg := v.Config
	if err := scenario.Set(&cfg, t.Field, strconv.Itoa(n)); err != nil {
		return false, "", nil, fmt.Errorf("--target-rate: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return false, "", nil, fmt.Errorf("%s with %s=%d: %w", v.Name, t.Field, n, err)
	}
	var pts []Point
	lim := ""
	for _, seed := range s.Seeds {
		p, err := s.probe(v, cfg, t.Rate, seed)
		if err != nil {
			return false, "", nil, err
		}
		if p.Overrides == nil {
			p.Overrides = map[string]string{}
		}
		p.Overrides[t.Field] = strconv.Itoa(n)
		pts = append(pts, p)
		lim = p.Limiting
		if !*p.Pass {
			return false, lim, pts, nil
		}
	}
	return true, lim, pts, nil
}

// SearchTarget finds the smallest value of t.Field at which v holds
// t.Rate: doubling from 1 until it holds, then bisecting the integers
// between the last failing and the first holding value. It assumes more
// never holds less (more replicas never serve less).
func (s *Search) SearchTarget(v scenario.Variant, t Target, prices Prices) (ConfigSearch, error) {
	if t.Max <= 0 {
		t.Max = 1024
	}
	s = s.withSpares()
	out := ConfigSearch{Capacity: Capacity{Config: v.Name, Overrides: overridesOf(v)}}
	tr := &TargetResult{Rate: t.Rate, Field: t.Field}
	try := func(n int) (bool, string, error) {
		ok, lim, pts, err := s.holdsAt(v, t, n)
		out.Points = append(out.Points, pts...)
		tr.Probes += len(pts)
		return ok, lim, err
	}
	lo, hi := 0, 0 // lo fails (0: none probed), hi holds
	limAtLo := ""
	for n := 1; ; n *= 2 {
		n = min(n, t.Max)
		ok, lim, err := try(n)
		if err != nil {
			return out, err
		}
		if ok {
			hi = n
			break
		}
		lo, limAtLo = n, lim
		if n == t.Max {
			break
		}
	}
	if hi == 0 {
		tr.LimitingTerm = limAtLo
		tr.Words = fmt.Sprintf("%s up to %d does not hold %s req/s (limited by %s)", t.Field, t.Max, num(t.Rate), limitWords(limAtLo))
		out.Capacity.Target = tr
		out.Capacity.LimitingTerm = limAtLo
		out.Capacity.Seeds, out.Capacity.Probes = len(s.Seeds), tr.Probes
		finishTarget(&out.Capacity, v, t, 0, prices)
		return out, nil
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, lim, err := try(mid)
		if err != nil {
			return out, err
		}
		if ok {
			hi = mid
		} else {
			lo, limAtLo = mid, lim
		}
	}
	tr.Value, tr.Holds = hi, true
	tr.LimitingTerm = limAtLo
	if lo > 0 {
		tr.Words = fmt.Sprintf("%s=%d holds %s req/s on every seed (%d does not: %s)", t.Field, hi, num(t.Rate), lo, limitWords(limAtLo))
	} else {
		tr.Words = fmt.Sprintf("%s=%d holds %s req/s on every seed", t.Field, hi, num(t.Rate))
	}
	out.Capacity.Target = tr
	out.Capacity.LimitingTerm = limAtLo
	out.Capacity.Seeds, out.Capacity.Probes = len(s.Seeds), tr.Probes
	finishTarget(&out.Capacity, v, t, hi, prices)
	return out, nil
}

// finishTarget fills in the cost of v with field = n at the target rate,
// from the last passing probe of the median seed.
func finishTarget(c *Capacity, v scenario.Variant, t Target, n int, prices Prices) {
	cfg := v.Config
	if n > 0 {
		_ = scenario.Set(&cfg, t.Field, strconv.Itoa(n)) // probed already
	}
	var price float64
	c.GPU, c.GPUs, price = Fleet(cfg, prices)
	c.USDPerGPUHour = USD(price)
	if n > 0 {
		c.MaxRate, c.MinRate = t.Rate, t.Rate
	}
}

// SearchTargets answers t for every configuration on workers goroutines,
// then fills in each one's figures from its passing probes.
func (s *Search) SearchTargets(vs []scenario.Variant, t Target, prices Prices, workers int, progress Progress) ([]ConfigSearch, error) {
	if progress != nil {
		progress(0, len(vs))
	}
	out, err := Map(len(vs), workers, func(i int) (ConfigSearch, error) { return s.SearchTarget(vs[i], t, prices) }, progress)
	if err != nil {
		return nil, err
	}
	for i := range out {
		c := &out[i].Capacity
		if c.Target == nil || !c.Target.Holds {
			continue
		}
		// The figures at the answer: the median seed's probe at Value.
		var at []Point
		for _, p := range out[i].Points {
			if p.Overrides[t.Field] == strconv.Itoa(c.Target.Value) {
				at = append(at, p)
			}
		}
		if len(at) == 0 {
			continue
		}
		idx := make([]float64, len(at))
		for k, p := range at {
			idx[k] = p.OutputTokensPerS
		}
		m := median(idx)
		for _, p := range at {
			if p.OutputTokensPerS == m {
				c.OutputTokensPerS = p.OutputTokensPerS
				c.TokensPerSPerUser = p.TokensPerSPerUser.Mean
				c.StreamP99ITLP99 = sig6(p.Summary.StreamP99ITL.P99)
				break
			}
		}
		if c.GPUs > 0 {
			c.TokensPerSPerGPU = sig6(c.OutputTokensPerS / float64(c.GPUs))
		}
		if c.OutputTokensPerS > 0 && c.USDPerGPUHour > 0 {
			c.USDPerMillionTokens = USD(sig6(float64(c.GPUs) * float64(c.USDPerGPUHour) / 3600 / c.OutputTokensPerS * 1e6))
		}
	}
	return out, nil
}

// Cheapest is the index of the configuration holding the target at the
// lowest cost per hour (GPUs × price; GPUs alone when a price is
// missing), ties to the first; -1 when none holds.
func Cheapest(cs []Capacity) int {
	best, bestCost := -1, 0.0
	for i, c := range cs {
		if c.Target == nil || !c.Target.Holds {
			continue
		}
		cost := float64(c.GPUs)
		if c.USDPerGPUHour > 0 {
			cost *= float64(c.USDPerGPUHour)
		}
		if best < 0 || cost < bestCost {
			best, bestCost = i, cost
		}
	}
	return best
}
