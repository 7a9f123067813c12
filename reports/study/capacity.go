package study

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// Outcome is one SLO term judged on one run: runs[].slo[] of the JSON
// contract ({term, unit, value, limit, pass, margin}).
type Outcome = reports.SLOOutcome

// Condition is the SLO a capacity search holds a run to: it judges each
// of its terms on a run's measured figures.
type Condition interface {
	Evaluate(m *Metrics) []Outcome
}

// Terms are SLO terms (package reports/slo) judged on the measured
// window's summary; they are a Condition.
type Terms []slo.Term

var _ Condition = Terms(nil)

// Evaluate judges every term on m's summary.
func (ts Terms) Evaluate(m *Metrics) []Outcome { return slo.Evaluate(ts, &m.Summary) }

// scoresQoE tells whether a term needs the streams' QoE or fluidity
// scores, which are computed only then.
func (ts Terms) scoresQoE() bool {
	for _, t := range ts {
		if t.Metric == "qoe" || t.Metric == "fluidity" {
			return true
		}
	}
	return false
}

// StableTerm names the implicit term every capacity search adds: the run
// reached a steady state (Metrics.Stable).
const StableTerm = "stable"

// Sections is how many consecutive sections of the measured window the
// SLO terms' confidence bounds are computed from (batch means).
const Sections = 10

// Bound is one SLO term's 95 % one-sided confidence bound on a run: the
// JSON of slo_bounds[]. A term holds only when its bound meets the limit:
// for <= terms the upper bound value + t·s/√B is at most the limit, for >=
// terms the lower bound is at least it, where s is the standard deviation
// of the term's value over the B sections of the window it is defined on
// (batch means; Student's t with B − 1 degrees of freedom). With fewer
// than 3 sections defined there is no bound and the term holds on its
// value alone (Batches says so).
type Bound struct {
	Term    string   `json:"term"`
	Bound   *float64 `json:"bound"`
	Batches int      `json:"batches"`
	Pass    bool     `json:"pass"`
}

// Judge applies c and the stability rule to m: whether the run passes and
// the limiting term — stable when the run is not, else the first term
// whose confidence bound (from the window's sections secs) misses its
// limit, else the term reports/slo names (an undefined one, or the one
// with the least margin relative to its limit).
func Judge(c Condition, m *Metrics, secs []reports.Summary) (pass bool, limiting string, outs []Outcome, bounds []Bound) {
	if c != nil {
		outs = c.Evaluate(m)
	}
	pass = m.Stable && slo.Pass(outs)
	limiting = StableTerm
	if ts, ok := c.(Terms); ok && len(secs) > 0 {
		bounds = termBounds(ts, outs, secs)
	}
	failed := -1
	for i, b := range bounds {
		if !b.Pass && outs[i].Pass {
			pass = false
			if failed < 0 {
				failed = i
			}
		}
	}
	if !m.Stable {
		return pass, limiting, outs, bounds
	}
	if i := slo.Limiting(outs); i >= 0 && (failed < 0 || !outs[i].Pass) {
		limiting = outs[i].Term
	} else if failed >= 0 {
		limiting = outs[failed].Term
	}
	return pass, limiting, outs, bounds
}

// termBounds computes each term's bound from the sections.
func termBounds(ts Terms, outs []Outcome, secs []reports.Summary) []Bound {
	vals := make([][]float64, len(ts))
	for k := range secs {
		for i, o := range slo.Evaluate(ts, &secs[k]) {
			if o.Value != nil {
				vals[i] = append(vals[i], *o.Value)
			}
		}
	}
	out := make([]Bound, len(ts))
	for i, t := range ts {
		b := Bound{Term: t.Text, Batches: len(vals[i]), Pass: outs[i].Pass}
		if outs[i].Value != nil && len(vals[i]) >= 3 {
			n := float64(len(vals[i]))
			var mean, ss float64
			for _, v := range vals[i] {
				mean += v / n
			}
			for _, v := range vals[i] {
				ss += (v - mean) * (v - mean)
			}
			half := tQuantile95(len(vals[i])-1) * math.Sqrt(ss/(n-1)/n)
			v := *outs[i].Value + half
			b.Pass = v <= t.Limit
			if !t.AtMost {
				v = *outs[i].Value - half
				b.Pass = v >= t.Limit
			}
			v = sig6(v)
			b.Bound = &v
		}
		out[i] = b
	}
	return out
}

// RuleWords is the rule every capacity answer follows, for its output.
const RuleWords = "A probe holds when its backlog trend is stable (MSER-5 warm-up, then the OLS slope of the in-system count over 10 batch means, 95 % bound below 2 % of the arrival rate; a run not yet conclusive is doubled up to --max-extend times, and one still inconclusive fails) and every SLO term's 95 % confidence bound (batch means over 10 sections of the window) meets its limit. max_rate is the mean of the seeds' highest holding rates, with a Student's t 95 % interval over seeds (ci_low, ci_high)."

// seedNote is the median seed's note on a stability failure.
func seedNote(c Capacity) string {
	if c.LimitingTerm != StableTerm || len(c.PerSeed) == 0 {
		return ""
	}
	order := slices.Clone(c.PerSeed)
	slices.SortStableFunc(order, func(a, b SeedCapacity) int { return cmp.Compare(a.MaxRate, b.MaxRate) })
	return order[(len(order)-1)/2].Note
}

// limitWords says a limiting term for prose: the stability rule as
// "stability (the run never reached a steady state)".
func limitWords(term string) string {
	if term == StableTerm {
		return "stability"
	}
	return term
}

// Search is how a capacity search probes rates.
type Search struct {
	Window Window
	// Tolerance is the bisection's stopping width as a share of the
	// passing rate: stop when (fail − pass) ≤ Tolerance·pass. Default 0.02.
	Tolerance float64
	// StartRate is the first rate probed, req/s; 0: the configuration's
	// workload.rate.
	StartRate float64
	// Seeds are the seeds each configuration is searched with, one
	// search per seed.
	Seeds []uint64
	// AutoSeeds adds seeds (the next ones after Seeds) until the interval
	// of max_rate is within Precision of it on either side, or MaxSeeds.
	AutoSeeds bool    `json:",omitempty"`
	Precision float64 `json:",omitempty"`
	MaxSeeds  int     `json:",omitempty"`
	// Sensitivity searches every configuration again with the same seeds
	// and every step's time scaled by 1 ± SensitivityStep, to a bisection
	// tolerance of at most SensitivityTolerance, and gives max_rate's
	// elasticity to step time (Capacity.Sensitivity).
	Sensitivity bool `json:",omitempty"`
	// Terms are the SLO terms; nil holds runs to stability alone.
	Terms Condition
	// cold starts every probe at the scenario's length (no warm start),
	// the reference the warm start is tested against.
	cold bool
	// spares are the histograms the search's runs share, one set per
	// search (withSpares): each probe's go back once it is measured.
	spares *sim.Spares
	// probes, when set (CountProbes), counts every probe run.
	probes *atomic.Int64
}

// Watch shows on line, polled from the first call of the Progress it
// returns until line.Done, the units done of the total that Progress was
// last told, and the probes run so far. That Progress is the one to give
// SearchConfigs (unit "searches", one per configuration and seed) or
// SearchTargets (unit "configurations"), which tell it the total before
// any search. A search's probe count is not known up front: the time left
// comes from the units.
func (s *Search) Watch(line *progress.Line, unit string) Progress {
	if line == nil {
		return nil
	}
	var probes, finished, total atomic.Int64
	var polling sync.Once
	s.probes = &probes
	return func(done, n int) {
		total.Store(int64(n))
		finished.Store(int64(done))
		polling.Do(func() {
			line.Poll(func() progress.Status {
				return progress.Status{Done: finished.Load(), Total: total.Load(), Unit: unit, Note: fmt.Sprintf("%d probes", probes.Load())}
			})
		})
	}
}

// withSpares is s with a set of spare histograms for its runs: s itself
// when it has one, else a copy (so a Search may be shared by callers).
func (s *Search) withSpares() *Search {
	if s.spares != nil {
		return s
	}
	c := *s
	c.spares = new(sim.Spares)
	return &c
}

// maxBracket bounds the doublings of the exponential bracket: 2^30 times
// the start rate is beyond any server. maxDown bounds its halvings, and
// minRate is the lowest rate probed, req/s.
const (
	maxBracket = 30
	maxDown    = 80
	minRate    = 1e-6
)

// Validate checks the search before any simulation.
func (s *Search) Validate() error {
	switch {
	case !(s.Tolerance > 0 && s.Tolerance < 1):
		return fmt.Errorf("--tolerance: expected a share in (0, 1), got %g", s.Tolerance)
	case s.StartRate < 0 || math.IsNaN(s.StartRate) || math.IsInf(s.StartRate, 0):
		return fmt.Errorf("--start-rate: expected a rate > 0 req/s (0: the scenario's), got %g", s.StartRate)
	case len(s.Seeds) == 0:
		return errors.New("--seeds: expected at least 1 seed")
	case s.AutoSeeds && !(s.Precision > 0 && s.Precision < 1):
		return fmt.Errorf("--precision: expected a share in (0, 1), got %g", s.Precision)
	case s.AutoSeeds && (s.MaxSeeds < len(s.Seeds) || s.MaxSeeds > 1000):
		return fmt.Errorf("--max-seeds: expected %d to 1000 seeds, got %d", len(s.Seeds), s.MaxSeeds)
	}
	return s.Window.Validate()
}

// SeedCapacity is one seed's search.
type SeedCapacity struct {
	Seed uint64 `json:"seed"`
	// MaxRate is the highest probed rate that passed below the lowest
	// probed rate that failed; 0 (null in the JSON) when even the lowest
	// probe failed.
	MaxRate float64 `json:"max_rate"`
	// FailRate is the lowest failing rate above MaxRate.
	FailRate     float64 `json:"fail_rate"`
	LimitingTerm string  `json:"limiting_term"`
	// Note says why the probe at FailRate failed when stability did
	// (unstable, or inconclusive at the cap).
	Note   string `json:"note,omitempty"`
	Probes int    `json:"probes"`
	// at is the passing probe at MaxRate.
	at *Point
}

// MarshalJSON writes max_rate as null when nothing held.
func (sc SeedCapacity) MarshalJSON() ([]byte, error) {
	type plain SeedCapacity
	return json.Marshal(struct {
		plain
		MaxRate *float64 `json:"max_rate"`
	}{plain(sc), optional(sc.MaxRate)})
}

func optional(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}

// CIMethod says how a configuration's interval is computed.
const CIMethod = "seeds as replications: Student's t 95 % interval over the per-seed max rates"

// Capacity is one configuration's answer: the JSON of capacity[].
type Capacity struct {
	Config    string            `json:"config"`
	Overrides map[string]string `json:"overrides"`
	// MaxRate is the mean over seeds of each seed's highest passing rate;
	// CILow and CIHigh its 95 % interval (CIMethod; null with one seed);
	// MinRate the lowest seed's. All null in the JSON (n/a in tables)
	// when nothing held on any seed.
	MaxRate  float64  `json:"max_rate"`
	CILow    *float64 `json:"ci_low"`
	CIHigh   *float64 `json:"ci_high"`
	CIMethod string   `json:"ci_method"`
	MinRate  float64  `json:"min_rate"`
	// Seeds and Probes are the seeds searched and the probes run over all
	// of them.
	Seeds   int            `json:"seeds"`
	Probes  int            `json:"probes"`
	PerSeed []SeedCapacity `json:"per_seed"`
	// LimitingTerm is the term that failed just above the median seed's
	// capacity.
	LimitingTerm string `json:"limiting_term"`
	GPU          string `json:"gpu"`
	GPUs         int    `json:"gpus"`
	// USDPerGPUHour is the on-demand price used (cost.GPUPrice or
	// --gpu-price); null in the JSON when the GPU has none.
	USDPerGPUHour USD `json:"usd_per_gpu_hour"`
	// The median seed's figures at its capacity.
	OutputTokensPerS    float64 `json:"output_tokens_per_s"`
	TokensPerSPerGPU    float64 `json:"tokens_per_s_per_gpu"`
	TokensPerSPerUser   float64 `json:"tokens_per_s_per_user"`
	StreamP99ITLP99     float64 `json:"stream_p99_itl_p99_ms"`
	USDPerMillionTokens USD     `json:"usd_per_million_tokens"`
	// Pareto marks the configurations no other beats on both tokens/s per
	// GPU and tokens/s per user; ParetoITL on tokens/s per GPU and the p99
	// of per-stream p99 ITL.
	Pareto    bool `json:"pareto"`
	ParetoITL bool `json:"pareto_itl"`
	// Target is set when the search looked for the smallest count of a
	// field (cluster.replicas) holding a target rate.
	Target *TargetResult `json:"target,omitempty"`
	// Sensitivity is max_rate's elasticity to step time, % per % (with
	// Search.Sensitivity): (R(1+h) − R(1−h)) / (2h · max_rate), R the mean
	// over the same seeds of the highest passing rate with every step's
	// time scaled. −1 means the capacity falls as the steps slow; an SLO
	// limit close to the latency the server gives makes it steeper.
	// SensitivityRates are R(1−h) and R(1+h); Fragile says in words when
	// the elasticity is beyond FragileElasticity.
	Sensitivity      *float64  `json:"sensitivity_pct_per_pct,omitempty"`
	SensitivityRates []float64 `json:"sensitivity_rates,omitempty"`
	Fragile          string    `json:"fragile,omitempty"`
}

// SensitivityStep is the relative change in step time a capacity
// sensitivity applies each way (2 %), SensitivityTolerance the bisection
// tolerance of its searches (0.5 %: finer than the default 2 %, so the
// difference of two rates 4 % apart is not lost in the bracket), and
// FragileElasticity the elasticity magnitude beyond which an answer is
// called fragile.
const (
	SensitivityStep      = 0.02
	SensitivityTolerance = 0.005
	FragileElasticity    = 5.0
)

// MarshalJSON writes max_rate and min_rate as null when nothing held.
func (c Capacity) MarshalJSON() ([]byte, error) {
	type plain Capacity
	return json.Marshal(struct {
		plain
		MaxRate *float64 `json:"max_rate"`
		MinRate *float64 `json:"min_rate"`
	}{plain(c), optional(c.MaxRate), optional(c.MinRate)})
}

// probe simulates cfg at rate r and judges it.
func (s *Search) probe(v scenario.Variant, cfg sim.Config, r float64, seed uint64) (Point, error) {
	return s.probeFrom(v, cfg, r, seed, 0)
}

// probeFrom is probe with the run starting at 2^from times the scenario's
// length (simulateFrom).
func (s *Search) probeFrom(v scenario.Variant, cfg sim.Config, r float64, seed uint64, from int) (Point, error) {
	cfg.Workload.Rate = r
	cfg.Seed = seed
	m, secs, err := simulateFrom(cfg, s.Window, scoresQoE(s.Terms), sectionsFor(s.Terms), from, s.spares)
	if s.probes != nil {
		s.probes.Add(1)
	}
	if err != nil {
		return Point{}, fmt.Errorf("%s at %g req/s, seed %d: %w", v.Name, r, seed, err)
	}
	pass, lim, outs, bounds := Judge(s.Terms, &m, secs)
	return Point{Config: v.Name, Overrides: overridesOf(v), Rate: r, Seed: seed, Pass: &pass, Limiting: lim, Outcomes: outs, Bounds: bounds, Metrics: m}, nil
}

// searchSeed finds one seed's capacity: an exponential bracket from the
// start rate (doubling while it passes; while it fails, halving, or going
// straight to the rate the failing run achieved when that is lower), then
// bisection until the bracket is within the tolerance. It returns the
// result and every probe in the order probed.
func (s *Search) searchSeed(v scenario.Variant, seed uint64) (SeedCapacity, []Point, error) {
	r := s.StartRate
	if r <= 0 {
		r = v.Config.Workload.Rate
	}
	var probes []Point
	from := 0 // doublings a bisection probe starts at
	try := func(r float64) (*Point, error) {
		p, err := s.probeFrom(v, v.Config, r, seed, from)
		if err != nil {
			return nil, err
		}
		probes = append(probes, p)
		return &probes[len(probes)-1], nil
	}
	sc := SeedCapacity{Seed: seed}
	// Probes are kept by index: the slice moves as it grows.
	loI, hiI := -1, -1
	p, err := try(r)
	if err != nil {
		return sc, nil, err
	}
	if *p.Pass {
		loI = 0
		for range maxBracket {
			q, err := try(probes[loI].Rate * 2)
			if err != nil {
				return sc, nil, err
			}
			if !*q.Pass {
				hiI = len(probes) - 1
				break
			}
			loI = len(probes) - 1
		}
		if hiI < 0 {
			return sc, nil, fmt.Errorf("%s, seed %d: every term still holds at %g req/s (2^%d × the start rate): nothing limits this configuration", v.Name, seed, probes[loI].Rate, maxBracket)
		}
	} else {
		hiI = 0
		for range maxDown {
			h := &probes[hiI]
			if h.Steady.Verdict == VerdictTooFew {
				break // a lower rate brings no more arrivals
			}
			next := h.Rate / 2
			// A run that did not keep up finished about what the server
			// can serve: below that, the search is near the answer.
			if a := h.AchievedPerS; a > 0 && a < next {
				next = sig6(a)
			}
			if next < minRate {
				break
			}
			// A rate so low that the workload's arrivals outlast the
			// simulator's horizon is not a probe: nothing holds.
			if w := v.Config.Workload; w.Rate > 0 {
				w.Rate = next
				if w.Validate() != nil {
					break
				}
			}
			q, err := try(next)
			if err != nil {
				return sc, nil, err
			}
			if *q.Pass {
				loI = len(probes) - 1
				break
			}
			hiI = len(probes) - 1
		}
		if loI < 0 {
			sc.FailRate, sc.LimitingTerm, sc.Probes = probes[hiI].Rate, probes[hiI].Limiting, len(probes)
			sc.Note = stableNote(&probes[hiI])
			return sc, probes, nil // fails even at a vanishing rate: nothing holds
		}
	}
	for probes[hiI].Rate-probes[loI].Rate > s.Tolerance*probes[loI].Rate {
		// Warm start: a rate between the bracket's ends starts at the
		// shorter of the run lengths the two needed for their verdicts
		// (near capacity the backlog's trend takes longest to tell), so
		// the runs shorter than that are not simulated only to be rerun.
		if !s.cold {
			from = min(probes[loI].Steady.Extensions, probes[hiI].Steady.Extensions)
		}
		mid := sig6((probes[loI].Rate + probes[hiI].Rate) / 2)
		if mid <= probes[loI].Rate || mid >= probes[hiI].Rate {
			break
		}
		q, err := try(mid)
		if err != nil {
			return sc, nil, err
		}
		if *q.Pass {
			loI = len(probes) - 1
		} else {
			hiI = len(probes) - 1
		}
	}
	sc.MaxRate, sc.FailRate = probes[loI].Rate, probes[hiI].Rate
	sc.LimitingTerm = probes[hiI].Limiting
	sc.Note = stableNote(&probes[hiI])
	sc.Probes = len(probes)
	at := probes[loI]
	sc.at = &at
	return sc, probes, nil
}

// stableNote is why a failing probe failed on stability; "" otherwise.
func stableNote(p *Point) string {
	if p.Limiting != StableTerm {
		return ""
	}
	return fmt.Sprintf("at %s req/s: %s", num(p.Rate), p.Unstable)
}

// CapacityResult is a capacity study's JSON document.
type CapacityResult struct {
	// Answer is the result in words, first.
	Answer string `json:"answer"`
	// Rule says when a probe holds and how sure each answer is.
	Rule     string     `json:"rule"`
	Capacity []Capacity `json:"capacity"`
	// Points is every probed point, configuration by configuration, seed
	// by seed, in the order probed.
	Points []Point `json:"points"`
}

// ConfigSearch is one configuration's capacity and its probes: the unit a
// capacity study shards by.
type ConfigSearch struct {
	Capacity Capacity `json:"capacity"`
	Points   []Point  `json:"points"`
}

// SearchConfig searches one configuration with every seed.
func (s *Search) SearchConfig(v scenario.Variant, prices Prices) (ConfigSearch, error) {
	out, err := s.SearchConfigs([]scenario.Variant{v}, prices, 1, nil)
	if err != nil {
		return ConfigSearch{}, err
	}
	return out[0], nil
}

// SearchConfigs searches every configuration, each seed's search on its
// own worker; results in input order. With AutoSeeds, rounds of further
// seeds follow for the configurations whose interval is still wider than
// Precision, each round decided from the finished ones (so the answer
// does not depend on the workers).
func (s *Search) SearchConfigs(vs []scenario.Variant, prices Prices, workers int, progress Progress) ([]ConfigSearch, error) {
	s = s.withSpares()
	type job struct {
		v    int
		seed uint64
	}
	out := make([]ConfigSearch, len(vs))
	for i := range out {
		out[i].Capacity = Capacity{Config: vs[i].Name, Overrides: overridesOf(vs[i])}
	}
	var jobs []job
	for vi := range vs {
		for _, seed := range s.Seeds {
			jobs = append(jobs, job{vi, seed})
		}
	}
	// progress counts seed searches finished of those planned: the
	// rounds so far and, with Sensitivity, two more searches for each of
	// them (step time faster and slower). It is told the total before a
	// round starts; a round of more seeds raises it.
	var mu sync.Mutex
	searched, planned, per := 0, 0, 1
	if s.Sensitivity {
		per = 3
	}
	for len(jobs) > 0 {
		type found struct {
			sc  SeedCapacity
			pts []Point
		}
		planned += len(jobs)
		if progress != nil {
			progress(searched, per*planned)
		}
		res, err := Map(len(jobs), workers, func(i int) (found, error) {
			sc, pts, err := s.searchSeed(vs[jobs[i].v], jobs[i].seed)
			if progress != nil {
				mu.Lock()
				searched++
				progress(searched, per*planned)
				mu.Unlock()
			}
			return found{sc, pts}, err
		}, nil)
		if err != nil {
			return nil, err
		}
		for i, j := range jobs {
			cs := &out[j.v]
			cs.Capacity.PerSeed = append(cs.Capacity.PerSeed, res[i].sc)
			cs.Points = append(cs.Points, res[i].pts...)
		}
		jobs = nil
		if !s.AutoSeeds {
			break
		}
		for vi := range out {
			per := out[vi].Capacity.PerSeed
			n := len(per)
			if n >= s.MaxSeeds || precise(per, s.Precision) {
				continue
			}
			last := per[n-1].Seed
			for k := range min(s.moreSeeds(per), s.MaxSeeds-n) {
				jobs = append(jobs, job{vi, last + 1 + uint64(k)})
			}
		}
	}
	if s.Sensitivity {
		var more Progress
		if progress != nil {
			more = func(done, _ int) { progress(searched+done, per*planned) }
		}
		if err := s.sensitivity(vs, out, workers, more); err != nil {
			return nil, err
		}
	}
	for i := range out {
		finishCapacity(&out[i].Capacity, vs[i].Config, prices)
	}
	return out, nil
}

// sensitivity searches every configuration of out again with the seeds it
// was searched with, its steps SensitivityStep faster and slower, and sets
// each one's elasticity of max_rate to step time.
func (s *Search) sensitivity(vs []scenario.Variant, out []ConfigSearch, workers int, progress Progress) error {
	fine := *s
	fine.Tolerance = min(s.Tolerance, SensitivityTolerance)
	type job struct {
		v    int
		side int // 0: faster, 1: slower
		seed uint64
	}
	var jobs []job
	for vi := range out {
		for side := range 2 {
			for _, sc := range out[vi].Capacity.PerSeed {
				jobs = append(jobs, job{vi, side, sc.Seed})
			}
		}
	}
	res, err := Map(len(jobs), workers, func(i int) (float64, error) {
		j := jobs[i]
		v := vs[j.v]
		k := v.Config.Cost.StepTimeScale
		if k <= 0 {
			k = 1
		}
		v.Config.Cost.StepTimeScale = k * (1 - SensitivityStep + 2*SensitivityStep*float64(j.side))
		sc, _, err := fine.searchSeed(v, j.seed)
		if err != nil {
			return 0, fmt.Errorf("sensitivity, step time ×%g: %w", v.Config.Cost.StepTimeScale/k, err)
		}
		return sc.MaxRate, nil
	}, progress)
	if err != nil {
		return err
	}
	sum := make([][2]float64, len(out))
	for i, j := range jobs {
		sum[j.v][j.side] += res[i]
	}
	for vi := range out {
		c := &out[vi].Capacity
		n := float64(len(c.PerSeed))
		base, _ := tInterval(maxRates(c.PerSeed))
		if n == 0 || !(base > 0) {
			continue
		}
		fast, slow := sum[vi][0]/n, sum[vi][1]/n
		el := (slow - fast) / (2 * SensitivityStep * base)
		c.Sensitivity, c.SensitivityRates = &el, []float64{fast, slow}
		if math.Abs(el) > FragileElasticity {
			c.Fragile = fmt.Sprintf("fragile: +1 %% step time moves max_rate by %+.1f %% (beyond ±%g %%/%%)", el, FragileElasticity)
		}
	}
	return nil
}

// precise tells whether the interval of the mean of per's max rates is
// within prec of the mean on either side.
func precise(per []SeedCapacity, prec float64) bool {
	mean, half := tInterval(maxRates(per))
	return mean > 0 && half <= prec*mean
}

// moreSeeds is how many seeds the next round adds: the count the spread so
// far says is needed, n·(half/(prec·mean))², less those run, at least 1
// and at most as many as were run.
func (s *Search) moreSeeds(per []SeedCapacity) int {
	n := len(per)
	mean, half := tInterval(maxRates(per))
	if mean <= 0 || math.IsInf(half, 0) {
		return n
	}
	need := int(math.Ceil(float64(n) * math.Pow(half/(s.Precision*mean), 2)))
	return min(max(need-n, 1), n)
}

func maxRates(per []SeedCapacity) []float64 {
	xs := make([]float64, len(per))
	for i, p := range per {
		xs[i] = p.MaxRate
	}
	return xs
}

// tInterval is the mean of xs and the half-width of its Student's t 95 %
// interval; +Inf with fewer than 2 values.
func tInterval(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	if len(xs) == 0 {
		return 0, math.Inf(1)
	}
	for _, x := range xs {
		mean += x / n
	}
	if len(xs) < 2 {
		return mean, math.Inf(1)
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, tQuantile975(len(xs)-1) * math.Sqrt(ss/(n-1)/n)
}

// finishCapacity fills in the mean and its interval, the cost and the
// figures at capacity (the median seed's).
func finishCapacity(c *Capacity, cfg sim.Config, prices Prices) {
	order := make([]int, len(c.PerSeed))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(c.PerSeed[a].MaxRate, c.PerSeed[b].MaxRate) })
	med := c.PerSeed[order[(len(order)-1)/2]]
	mean, half := tInterval(maxRates(c.PerSeed))
	c.MaxRate, c.MinRate = sig6(mean), c.PerSeed[order[0]].MaxRate
	c.CIMethod = CIMethod
	if c.MaxRate > 0 && !math.IsInf(half, 0) {
		lo, hi := sig6(max(mean-half, 0)), sig6(mean+half)
		c.CILow, c.CIHigh = &lo, &hi
	}
	c.Seeds = len(c.PerSeed)
	c.Probes = 0
	for _, p := range c.PerSeed {
		c.Probes += p.Probes
	}
	c.LimitingTerm = med.LimitingTerm
	var price float64
	c.GPU, c.GPUs, price = Fleet(cfg, prices)
	c.USDPerGPUHour = USD(price)
	if at := med.at; at != nil {
		c.OutputTokensPerS = at.OutputTokensPerS
		c.TokensPerSPerUser = at.TokensPerSPerUser.Mean
		c.StreamP99ITLP99 = sig6(at.Summary.StreamP99ITL.P99)
	}
	if c.GPUs > 0 {
		c.TokensPerSPerGPU = sig6(c.OutputTokensPerS / float64(c.GPUs))
	}
	if c.OutputTokensPerS > 0 && c.USDPerGPUHour > 0 {
		usdPerS := float64(c.GPUs) * float64(c.USDPerGPUHour) / 3600
		c.USDPerMillionTokens = USD(sig6(usdPerS / c.OutputTokensPerS * 1e6))
	}
	for i := range c.PerSeed {
		c.PerSeed[i].at = nil
	}
}

// Fleet is what a configuration occupies: its GPU model (for a cluster of
// pools, each pool's as "4×h100-sxm-80gb+2×a100-80gb"), its GPUs (every
// replica's tensor-parallel degree times its data-parallel ranks, summed)
// and the price per GPU-hour (for pools, the GPUs' mean; 0 when a GPU has
// no price).
func Fleet(cfg sim.Config, prices Prices) (gpu string, gpus int, usdPerGPUHour float64) {
	dp := max(cfg.DP, 1)
	tp := max(cfg.TP, 1) * dp
	if len(cfg.Cluster.Pools) == 0 {
		n := max(cfg.Cluster.Replicas, 1) * tp
		return cfg.GPU, n, prices.For(cfg.GPU)
	}
	var usd float64
	known := true
	var parts []string
	for _, p := range cfg.Cluster.Pools {
		g, t := cfg.GPU, tp
		if p.GPU != "" {
			g = p.GPU
		}
		if p.TP != 0 {
			t = p.TP * dp
		}
		n := p.Replicas * t
		gpus += n
		price := prices.For(g)
		known = known && price > 0
		usd += float64(n) * price
		parts = append(parts, fmt.Sprintf("%d×%s", n, g))
	}
	if !known || gpus == 0 {
		return strings.Join(parts, "+"), gpus, 0
	}
	return strings.Join(parts, "+"), gpus, usd / float64(gpus)
}

// MarkPareto marks the configurations on the two Pareto fronts: more
// tokens/s per GPU against more tokens/s per user, and against a lower
// p99 of per-stream p99 ITL. A configuration with no capacity is on
// neither.
func MarkPareto(cs []Capacity) {
	for i := range cs {
		a := &cs[i]
		if a.MaxRate <= 0 {
			continue
		}
		a.Pareto, a.ParetoITL = true, true
		for j := range cs {
			b := &cs[j]
			if i == j || b.MaxRate <= 0 {
				continue
			}
			if dominates(b.TokensPerSPerGPU, b.TokensPerSPerUser, a.TokensPerSPerGPU, a.TokensPerSPerUser) {
				a.Pareto = false
			}
			if dominates(b.TokensPerSPerGPU, -b.StreamP99ITLP99, a.TokensPerSPerGPU, -a.StreamP99ITLP99) {
				a.ParetoITL = false
			}
		}
	}
}

// dominates tells whether (x1, y1) is at least as good as (x2, y2) in both
// (larger is better) and better in one.
func dominates(x1, y1, x2, y2 float64) bool {
	return x1 >= x2 && y1 >= y2 && (x1 > x2 || y1 > y2)
}

// AnswerWords states the result: each configuration's capacity and the
// term that limited it, and the cost per million tokens relative to the
// first configuration.
func AnswerWords(cs []Capacity) string {
	var parts []string
	for i, c := range cs {
		var b strings.Builder
		b.WriteString(c.Config)
		b.WriteString(": ")
		if c.Target != nil {
			b.WriteString(c.Target.Words)
			parts = append(parts, b.String())
			continue
		}
		if c.MaxRate <= 0 {
			fmt.Fprintf(&b, "no rate holds (limited by %s", limitWords(c.LimitingTerm))
			if n := seedNote(c); n != "" {
				fmt.Fprintf(&b, "; %s", n)
			}
			b.WriteString(")")
			parts = append(parts, b.String())
			continue
		}
		fmt.Fprintf(&b, "%s req/s", num(c.MaxRate))
		if c.CILow != nil {
			fmt.Fprintf(&b, " (95 %% CI %s to %s over %d seeds, %d probes)", num(*c.CILow), num(*c.CIHigh), c.Seeds, c.Probes)
		} else {
			fmt.Fprintf(&b, " (one seed, %d probes: no interval; use --seeds auto)", c.Probes)
		}
		fmt.Fprintf(&b, ", limited by %s", limitWords(c.LimitingTerm))
		if n := seedNote(c); n != "" {
			fmt.Fprintf(&b, " (%s)", n)
		}
		if c.USDPerMillionTokens > 0 {
			fmt.Fprintf(&b, ", $%.3g per million output tokens", c.USDPerMillionTokens)
			if first := cs[0].USDPerMillionTokens; i > 0 && first > 0 {
				d := 1 - c.USDPerMillionTokens/first
				switch {
				case d > 0.005:
					fmt.Fprintf(&b, ", %.0f %% cheaper than %s", 100*d, cs[0].Config)
				case d < -0.005:
					fmt.Fprintf(&b, ", %.0f %% dearer than %s", -100*d, cs[0].Config)
				default:
					fmt.Fprintf(&b, ", as dear as %s", cs[0].Config)
				}
			}
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ") + "."
}

// AssembleCapacity joins the configurations' searches (in input order)
// into the study's result: the Pareto fronts, the cheapest configuration
// for a target, and the answer in words.
func AssembleCapacity(cs []ConfigSearch, _ int, target *Target) CapacityResult {
	res := CapacityResult{Capacity: []Capacity{}, Points: []Point{}}
	for _, c := range cs {
		res.Capacity = append(res.Capacity, c.Capacity)
		res.Points = append(res.Points, c.Points...)
	}
	MarkPareto(res.Capacity)
	res.Answer = AnswerWords(res.Capacity)
	for _, c := range res.Capacity {
		if c.Fragile != "" {
			res.Answer += fmt.Sprintf(" %s: %s.", c.Config, c.Fragile)
		}
	}
	res.Rule = RuleWords
	if target != nil && len(res.Capacity) > 1 {
		if i := Cheapest(res.Capacity); i >= 0 {
			c := res.Capacity[i]
			cost := fmt.Sprintf("%d GPUs", c.GPUs)
			if c.USDPerGPUHour > 0 {
				cost += fmt.Sprintf(", $%.2f per hour", float64(c.GPUs)*float64(c.USDPerGPUHour))
			}
			res.Answer = fmt.Sprintf("Cheapest holding %s req/s: %s (%s). %s", num(target.Rate), c.Config, cost, res.Answer)
		} else {
			res.Answer = fmt.Sprintf("No configuration holds %s req/s. %s", num(target.Rate), res.Answer)
		}
	}
	return res
}
