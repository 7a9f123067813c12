package reports

import (
	"reflect"
	"slices"
	"sync"

	"github.com/itlsim/itlsim/sim"
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

// Internal per-stream populations the summary shows but Population does
// not name.
const (
	popStreamP50ITL = numPops + iota // ms, each stream's median gap
	popFluidRate                     // tokens/s, each scored stream's fluid token rate
)

// streamSet is the streams a summary covers: the result's, or those of
// one of its traffic classes.
type streamSet struct {
	r     *sim.Result
	class int // -1: every stream
}

// each calls fn with every stream of the set and its index in the result.
func (ss streamSet) each(fn func(i int, st *sim.StreamSummary)) {
	for i, st := range ss.r.Streams.All() {
		if ss.class < 0 || int(st.Class) == ss.class {
			fn(i, st)
		}
	}
}

// eachServed calls fn with every stream of the set that was served (finished,
// or cancelled by the failover watchdog on the server), with its index in
// the result.
func (ss streamSet) eachServed(fn func(i int, st *sim.StreamSummary)) {
	ss.each(func(i int, st *sim.StreamSummary) {
		// A stream the failover watchdog cancelled (server view) counts with
		// the silence it ended in as its last wait (sim.StatusCancelled).
		if st.Status == sim.StatusFinished || st.Status == sim.StatusCancelled {
			fn(i, st)
		}
	})
}

// fill appends population p of the set's served streams to buf, in stream
// order, and returns it. gapless: the source recorded no gaps (the
// per-gap populations are empty).
func (ss streamSet) fill(p Population, gapless bool, buf []float64) []float64 {
	ss.eachServed(func(i int, st *sim.StreamSummary) {
		switch p {
		case PopTTFT, PopE2EL, PopTPOT, PopTokensPerSPerUser:
			t := timesOf(ss.r, i)
			switch {
			case p == PopTTFT:
				buf = append(buf, ms(t.ttft))
			case p == PopE2EL:
				buf = append(buf, ms(t.e2el))
			case st.OutputTokens < 2:
			case p == PopTPOT:
				buf = append(buf, ms(t.tpot))
			case t.tpot > 0:
				buf = append(buf, 1e9/t.tpot)
			}
		case PopQoE, PopFluidity, popFluidRate:
			switch {
			case !st.Scored:
			case p == PopQoE:
				buf = append(buf, float64(st.QoE))
			case p == PopFluidity:
				buf = append(buf, float64(st.Fluidity))
			case st.Chunks >= 2: // one chunk has no rate to keep
				buf = append(buf, float64(st.FluidRate))
			}
		case popStreamP50ITL, PopStreamP99ITL, PopStreamMaxGap, PopJitter:
			switch {
			case gapless || !st.HasGaps():
			case p == popStreamP50ITL:
				buf = append(buf, ms(st.GapP50))
			case p == PopStreamP99ITL:
				buf = append(buf, ms(st.GapP99))
			case p == PopStreamMaxGap:
				buf = append(buf, ms(timesOf(ss.r, i).maxGap))
			default:
				buf = append(buf, st.Jitter())
			}
		}
	})
	return buf
}

// populations keeps what a summary needs of its populations beyond the
// chosen percentiles: their standard deviations (the vllm block) and,
// for any percentile, either the sorted populations themselves (kept) or
// the streams to draw them from again when asked (Options.FromResult).
type populations struct {
	std    [numPops]float64    // ms (ratio, score, tokens/s); 0 for an empty population
	dists  [numPops]Dist       // at the summary's percentiles
	pooled *quantile.Histogram // simulations: pooled ITL in ns (PopITL's sorted is nil)
	single int                 // streams of one chunk (no gaps: good for ITL goodput)

	// sorted holds the kept populations. With set.r non-nil they are not
	// kept: a population is drawn again from set when asked, into drawn,
	// which holds the last one drawn (guarded by mu: summaries are read
	// from several goroutines).
	mu      sync.Mutex
	sorted  [numPops][]float64
	set     streamSet
	gapless bool
	drawn   []float64
	last    Population // drawn's population; valid when drawn is not nil
}

// with calls fn with p's sorted population (empty when unknown); fn must
// not keep it.
func (pp *populations) with(p Population, fn func(sorted []float64)) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	v := pp.sorted[p]
	if v == nil && pp.set.r != nil && p != PopITL {
		if pp.drawn == nil || pp.last != p {
			pp.drawn = pp.set.fill(p, pp.gapless, pp.drawn[:0])
			slices.Sort(pp.drawn)
			pp.last = p
		}
		v = pp.drawn
	}
	fn(v)
}

// Dist returns the summary's distribution of p (the Vocabulary row's
// accessor); empty for a population without one.
func (s *Summary) Dist(p Population) Dist {
	if m, ok := MetricOf(p); ok && m.Dist != nil {
		return m.Dist(s)
	}
	return Dist{}
}

// scoreDist is score summary sc of population p as a Dist: the one drawn
// at the summary's percentiles when kept, else its mean, p10 and p50.
func (s *Summary) scoreDist(p Population, sc ScoreSummary) Dist {
	d := Dist{N: sc.N, Mean: sc.Mean, P50: sc.P50, Q: []Quantile{{10, sc.P10}, {50, sc.P50}}}
	if s.pops != nil && s.pops.dists[p].N > 0 {
		d = s.pops.dists[p]
	}
	return d
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
		if p != PopITL || s.pops.sorted[PopITL] != nil {
			var v float64
			var ok bool
			s.pops.with(p, func(sorted []float64) {
				if ok = len(sorted) > 0; ok {
					v = quantile.Linear(sorted, q/100)
				}
			})
			return v, ok
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
	var n int
	s.pops.with(PopStreamMaxGap, func(gaps []float64) {
		var found bool
		n, found = slices.BinarySearch(gaps, thetaMS)
		for found && n < len(gaps) && gaps[n] == thetaMS {
			n++
		}
	})
	return float64(n+s.pops.single) / float64(served), true
}

// Equal reports whether s and o are the same figures of the same
// populations: every field, the server view's and the classes' summaries,
// and each population value for value (two runs that differ only in
// settings that made no difference).
func (s *Summary) Equal(o *Summary) bool {
	a, b := *s, *o
	a.pops, b.pops, a.Server, b.Server, a.ByClass, b.ByClass = nil, nil, nil, nil, nil, nil
	if !reflect.DeepEqual(a, b) || (s.Server == nil) != (o.Server == nil) || len(s.ByClass) != len(o.ByClass) ||
		(s.pops == nil) != (o.pops == nil) {
		return false
	}
	if s.Server != nil && !s.Server.Equal(o.Server) {
		return false
	}
	for k, c := range s.ByClass {
		if d, ok := o.ByClass[k]; !ok || (c == nil) != (d == nil) || c != nil && !c.Equal(d) {
			return false
		}
	}
	if s.pops == nil {
		return true
	}
	p, q := s.pops, o.pops
	if p.std != q.std || p.single != q.single || !reflect.DeepEqual(p.dists, q.dists) || !reflect.DeepEqual(p.pooled, q.pooled) {
		return false
	}
	for pop := range numPops {
		var x []float64
		p.with(pop, func(v []float64) { x = slices.Clone(v) })
		same := false
		q.with(pop, func(v []float64) { same = slices.Equal(x, v) })
		if !same {
			return false
		}
	}
	return true
}
