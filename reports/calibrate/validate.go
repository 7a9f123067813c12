package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/frontend"
	"github.com/itlsim/itlsim/workloads"
)

// Options control a validation.
type Options struct {
	// Seeds is how many arrival draws are simulated when the arrivals are
	// random (Poisson at the file's rate); the figures are their median,
	// with the minimum and maximum beside. Default 5.
	Seeds int
	// WarmCache starts each run with the prompts of the runs before it in
	// the list already in the prefix cache, as when the runs were made back
	// to back on one server with prefix caching on. Prompts are matched by
	// position and length in the files (vLLM bench with the same dataset
	// and seed sends the same prompts in the same order).
	WarmCache bool
	// Sensitivity reruns every run with the same seeds and every step's
	// time scaled by 1 − SensitivityStep and 1 + SensitivityStep, and gives
	// each figure its elasticity to step time (Figure.Sensitivity). It
	// triples the simulations. It also gives each figure its elasticity
	// to each front-end constant that is not 0 (FrontEndConstants), one
	// at a time, two more simulations a constant (Figure.FrontEnd).
	Sensitivity bool
}

// FrontEndConstants are the front end's fields whose elasticities
// Options.Sensitivity reports, in table order.
var FrontEndConstants = []string{"server.serial_us_per_prompt_token", "server.serial_ms_per_request",
	"server.request_overhead_ms", "server.handoff_ms", "server.detokenize_us_per_output_token"}

// SensitivityStep is the relative change in step time of a sensitivity
// analysis' central difference: steps 2 % faster and 2 % slower.
const SensitivityStep = 0.02

// FragileElasticity is the elasticity (per cent per per cent of step time)
// beyond which an answer is called fragile.
const FragileElasticity = 5.0

// DefaultOptions: five seeds, a cold cache.
func DefaultOptions() Options { return Options{Seeds: 5} }

// Metric is one figure compared between measurement and simulation.
type Metric struct {
	Key string // the JSON key, e.g. "ttft_p50_ms"
	Get func(*reports.Summary) float64
	// PerGap marks figures a source without gaps (GuideLLM) cannot give.
	PerGap bool
}

// figure is the key of statistic stat of population p among the compared
// figures: the Vocabulary's figure name, the statistic, the unit
// (ttft_p50_ms).
func figure(p reports.Population, stat string) string {
	m, _ := reports.MetricOf(p)
	return m.FigureKey(stat)
}

// Metrics are the compared figures, in table order.
var Metrics = []Metric{
	{Key: figure(reports.PopTTFT, "p50"), Get: func(s *reports.Summary) float64 { return s.TTFT.P50 }},
	{Key: figure(reports.PopTTFT, "p90"), Get: func(s *reports.Summary) float64 { return s.TTFT.P90 }},
	{Key: figure(reports.PopTTFT, "p99"), Get: func(s *reports.Summary) float64 { return s.TTFT.P99 }},
	{Key: figure(reports.PopTPOT, "p50"), Get: func(s *reports.Summary) float64 { return s.TPOT.P50 }},
	{Key: figure(reports.PopTPOT, "p90"), Get: func(s *reports.Summary) float64 { return s.TPOT.P90 }},
	{Key: figure(reports.PopTPOT, "p99"), Get: func(s *reports.Summary) float64 { return s.TPOT.P99 }},
	{Key: figure(reports.PopITL, "p50"), Get: func(s *reports.Summary) float64 { return s.ITLPooled.P50 }, PerGap: true},
	{Key: figure(reports.PopITL, "p90"), Get: func(s *reports.Summary) float64 { return s.ITLPooled.P90 }, PerGap: true},
	{Key: figure(reports.PopITL, "p99"), Get: func(s *reports.Summary) float64 { return s.ITLPooled.P99 }, PerGap: true},
	{Key: figure(reports.PopE2EL, "p50"), Get: func(s *reports.Summary) float64 { return s.E2EL.P50 }},
	{Key: figure(reports.PopE2EL, "p90"), Get: func(s *reports.Summary) float64 { return s.E2EL.P90 }},
	{Key: figure(reports.PopE2EL, "p99"), Get: func(s *reports.Summary) float64 { return s.E2EL.P99 }},
	{Key: figure(reports.PopStreamP99ITL, "p50"), Get: func(s *reports.Summary) float64 { return s.StreamP99ITL.P50 }, PerGap: true},
	{Key: figure(reports.PopStreamP99ITL, "p90"), Get: func(s *reports.Summary) float64 { return s.StreamP99ITL.P90 }, PerGap: true},
	{Key: "requests_per_s", Get: func(s *reports.Summary) float64 { return s.RequestsPerS }},
	{Key: "output_tokens_per_s", Get: func(s *reports.Summary) float64 { return s.OutputTokensPerS }},
}

// Figure is one metric measured and simulated.
type Figure struct {
	Metric   string  `json:"metric"`
	Measured float64 `json:"measured"`
	// Simulated is the median over the simulated seeds; Min and Max
	// their range (equal to Simulated for one seed).
	Simulated float64 `json:"simulated"`
	Min       float64 `json:"simulated_min"`
	Max       float64 `json:"simulated_max"`
	// Error is Simulated/Measured − 1, signed: positive when the
	// simulator is pessimistic (slower) for times. NaN (null in JSON) when
	// the measurement cannot give the figure.
	Error *float64 `json:"error"`
	// Sensitivity is the figure's elasticity to step time, % per % (with
	// Options.Sensitivity; nil otherwise, or when the figure is 0 or n/a):
	// (f(1+h) − f(1−h)) / (2h · f(1)) for step times scaled by 1 ± h, the
	// same seeds. 1 means the figure moves as the steps do; near
	// saturation a tail can move ten times as much.
	Sensitivity *float64 `json:"sensitivity_pct_per_pct,omitempty"`
	// FrontEnd is the figure's elasticity to each front-end constant
	// (Options.Sensitivity), % per %, by field path: the constant scaled
	// by 1 ± SensitivityStep, the same seeds. A constant at 0, or
	// detokenization off the engine's path, has none.
	FrontEnd map[string]float64 `json:"frontend_sensitivity_pct_per_pct,omitempty"`
	// MeasuredNA and SimulatedNA mark a side that cannot give the figure
	// (a file without gaps, a run of duration 0, every simulated request
	// rejected): the table prints n/a there rather than a 0.
	MeasuredNA  bool `json:"-"`
	SimulatedNA bool `json:"-"`
}

// Comparison is one measured run against its simulation.
type Comparison struct {
	Name     string   `json:"name"`
	File     string   `json:"file"`
	Requests int      `json:"requests"`
	Arrivals string   `json:"arrivals"`
	Seeds    []uint64 `json:"seeds"`
	// WarmBlocks is the KV blocks the prefix cache held at the start
	// (earlier runs' prompts, with Options.WarmCache).
	WarmBlocks int      `json:"warm_blocks"`
	Figures    []Figure `json:"figures"`
	Notes      []string `json:"notes,omitempty"`

	// Measured and Simulated are the runs behind the figures (the
	// simulated one of the median seed by TTFT p50), for the HTML report.
	Measured  *sim.Result       `json:"-"`
	Simulated []*sim.Result     `json:"-"`
	Summaries []reports.Summary `json:"-"`
}

// Validate simulates the requests of every recording under setup (the
// scenario's workload section is not used: the requests come from the
// file) and compares the figures. Recordings are simulated in order; with
// WarmCache, recording i starts with the prompts of recordings 0…i−1
// cached.
func Validate(setup *sim.Setup, recs []ingest.Recording, o Options) ([]Comparison, error) {
	if o.Seeds < 1 {
		return nil, fmt.Errorf("seeds: must be ≥ 1, got %d", o.Seeds)
	}
	out := make([]Comparison, 0, len(recs))
	m := setup.Config.Metrics
	for i := range recs {
		rec := &recs[i]
		if len(rec.Streams) == 0 {
			return nil, fmt.Errorf("%s: no request produced output: nothing to simulate", rec.File)
		}
		offer, err := OfferOf(rec)
		if err != nil {
			return nil, err
		}
		if n := setup.Config.Workload.MaxConcurrency; n > 0 && offer.Concurrency > 0 && n != offer.Concurrency {
			return nil, fmt.Errorf("%s: the measured run capped requests in flight at %d, not %d: drop --max-concurrency (workload.max_concurrency) or give %d",
				rec.File, offer.Concurrency, n, offer.Concurrency)
		}
		c := Comparison{Name: rec.Name, File: rec.File, Requests: len(rec.Streams), Arrivals: offer.String(),
			Notes: append([]string(nil), rec.Notes...)}
		if n := failedCount(rec); n > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%d failed request(s) are not simulated", n))
		}
		if rec.Load.Burstiness > 0 && rec.Load.Burstiness != 1 && offer.Arrivals == PoissonAt {
			c.Notes = append(c.Notes, fmt.Sprintf("burstiness %g: simulated as Poisson arrivals", rec.Load.Burstiness))
		}
		seeds := 1
		if offer.Random {
			seeds = o.Seeds
		}
		measured := rec.Result(m)
		ms := reports.Summarize(measured, m)
		c.Measured = measured
		sums, results, ss, warmBlocks, err := simulateRun(setup, recs, i, offer, seeds, o.WarmCache)
		if err != nil {
			return nil, err
		}
		c.Seeds, c.Simulated, c.WarmBlocks = ss, results, warmBlocks
		var slow, fast []reports.Summary
		type feRuns struct {
			path       string
			slow, fast []reports.Summary
		}
		var fe []feRuns
		if o.Sensitivity {
			for _, p := range FrontEndConstants {
				lo, hi := withFrontEnd(setup, p, 1-SensitivityStep), withFrontEnd(setup, p, 1+SensitivityStep)
				if lo == nil {
					continue
				}
				r := feRuns{path: p}
				if r.fast, _, _, _, err = simulateRun(lo, recs, i, offer, seeds, o.WarmCache); err != nil {
					return nil, err
				}
				if r.slow, _, _, _, err = simulateRun(hi, recs, i, offer, seeds, o.WarmCache); err != nil {
					return nil, err
				}
				fe = append(fe, r)
			}
			if fast, _, _, _, err = simulateRun(setup.Scaled(1-SensitivityStep), recs, i, offer, seeds, o.WarmCache); err != nil {
				return nil, err
			}
			if slow, _, _, _, err = simulateRun(setup.Scaled(1+SensitivityStep), recs, i, offer, seeds, o.WarmCache); err != nil {
				return nil, err
			}
		}
		c.Summaries = sums
		for _, mt := range Metrics {
			f := Figure{Metric: mt.Key, Measured: mt.Get(&ms)}
			vals := make([]float64, len(sums))
			for k := range sums {
				vals[k] = mt.Get(&sums[k])
			}
			slices.Sort(vals)
			f.Simulated = median(vals)
			f.Min, f.Max = vals[0], vals[len(vals)-1]
			f.MeasuredNA = (mt.PerGap && rec.NoGaps) || ms.Finished == 0 || (f.Measured == 0 && strings.HasSuffix(mt.Key, "_per_s"))
			f.SimulatedNA = true
			for k := range sums {
				f.SimulatedNA = f.SimulatedNA && sums[k].Finished == 0
			}
			if !f.MeasuredNA && !f.SimulatedNA && f.Measured != 0 {
				e := f.Simulated/f.Measured - 1
				f.Error = &e
			}
			if o.Sensitivity && !f.SimulatedNA && f.Simulated != 0 {
				el := (medianOf(slow, mt) - medianOf(fast, mt)) / (2 * SensitivityStep * f.Simulated)
				f.Sensitivity = &el
				if math.Abs(el) > FragileElasticity {
					c.Notes = append(c.Notes, FragileNote(mt.Key, el))
				}
				for _, r := range fe {
					if f.FrontEnd == nil {
						f.FrontEnd = map[string]float64{}
					}
					el := (medianOf(r.slow, mt) - medianOf(r.fast, mt)) / (2 * SensitivityStep * f.Simulated)
					f.FrontEnd[r.path] = el
					if math.Abs(el) > FragileElasticity {
						c.Notes = append(c.Notes, fmt.Sprintf("fragile: +1 %% of %s moves %s by %+.1f %% (beyond ±%g %%/%%)", r.path, mt.Key, el, FragileElasticity))
					}
				}
			}
			c.Figures = append(c.Figures, f)
		}
		out = append(out, c)
	}
	return out, nil
}

// simulateRun simulates recording i of recs under setup over seeds arrival
// draws: the summaries, the results, the seeds and the warm KV blocks.
func simulateRun(setup *sim.Setup, recs []ingest.Recording, i int, offer Offer, seeds int, warmCache bool) ([]reports.Summary, []*sim.Result, []uint64, int, error) {
	rec := &recs[i]
	m := setup.Config.Metrics
	var sums []reports.Summary
	var results []*sim.Result
	var ss []uint64
	warmBlocks := 0
	for k := range seeds {
		s := setup.Config.Seed + uint64(k)
		ss = append(ss, s)
		reqs := Requests(rec, offer, s, uint64(i)+1)
		var src workloads.Source = &workloads.Slice{Requests: reqs}
		if offer.Concurrency > 0 {
			src = workloads.NewInFlight(src, offer.Concurrency)
		}
		e, err := sim.NewFromSetup(setup, src)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		if warmCache {
			warmBlocks = warm(e, recs[:i])
		}
		res, err := study.RunScored(e, false, nil) // the measured figures have no QoE to compare
		if err != nil {
			return nil, nil, nil, 0, err
		}
		results = append(results, res)
		sums = append(sums, reports.Summarize(res, m))
	}
	return sums, results, ss, warmBlocks, nil
}

// withFrontEnd is s with the front-end constant path scaled by k, or nil
// when it is 0 or moves nothing (detokenization off the engine's path). s
// is not changed.
func withFrontEnd(s *sim.Setup, path string, k float64) *sim.Setup {
	c := *s
	sv := &c.Config.Server
	var v *float64
	switch path {
	case "server.serial_us_per_prompt_token":
		v = &sv.SerialUSPerPromptToken
	case "server.serial_ms_per_request":
		v = &sv.SerialMSPerRequest
	case "server.request_overhead_ms":
		v = &sv.RequestOverheadMS
	case "server.handoff_ms":
		v = &sv.HandoffMS
	case "server.detokenize_us_per_output_token":
		d, ok := s.Cost.(frontend.EngineDetokenization)
		if !ok || d.NS == 0 {
			return nil
		}
		d.NS *= k
		c.Cost = d
		v = &sv.DetokenizeUSPerOutputToken
	default:
		return nil
	}
	if *v == 0 {
		return nil
	}
	*v *= k
	// The pools' setups are what the replicas run (a lone
	// configuration's one pool is s itself).
	c.Pools = make([]sim.Pool, len(s.Pools))
	for i, p := range s.Pools {
		if p.Setup == s {
			p.Setup = &c
		} else if p.Setup != nil {
			if q := withFrontEnd(p.Setup, path, k); q != nil {
				p.Setup = q
			}
		}
		c.Pools[i] = p
	}
	return &c
}

// medianOf is the median of metric mt over sums.
func medianOf(sums []reports.Summary, mt Metric) float64 {
	vals := make([]float64, len(sums))
	for k := range sums {
		vals[k] = mt.Get(&sums[k])
	}
	slices.Sort(vals)
	return median(vals)
}

// FragileNote says in words how far an answer moves with 1 % of step time,
// for an elasticity el (% per %) beyond FragileElasticity.
func FragileNote(what string, el float64) string {
	return fmt.Sprintf("fragile: +1 %% step time moves %s by %+.1f %% (beyond ±%g %%/%%)", what, el, FragileElasticity)
}

// warm fills e's prefix cache with the prompts of the earlier recordings,
// oldest first (so the latest run's are the last evicted).
func warm(e *sim.Engine, earlier []ingest.Recording) int {
	kv := e.Replica().KV()
	blocks := 0
	for i := range earlier {
		for j, s := range earlier[i].Streams {
			c := contentOf(j, s.InputTokens)
			blocks += kv.Warm(&c, s.InputTokens)
		}
	}
	return blocks
}

func failedCount(rec *ingest.Recording) int {
	n := 0
	for _, v := range rec.Failed {
		n += v
	}
	return n
}

// median of sorted values: the middle one, or the mean of the two middle.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// MaxAbsError is the largest |error| among the figures named by keys
// (all when keys is empty); NaN when none has an error.
func (c *Comparison) MaxAbsError(keys ...string) float64 {
	worst := math.NaN()
	for _, f := range c.Figures {
		if f.Error == nil || (len(keys) > 0 && !slices.Contains(keys, f.Metric)) {
			continue
		}
		if math.IsNaN(worst) || math.Abs(*f.Error) > worst {
			worst = math.Abs(*f.Error)
		}
	}
	return worst
}

// Figure returns the figure of metric key; ok is false when there is none.
func (c *Comparison) Figure(key string) (Figure, bool) {
	for _, f := range c.Figures {
		if f.Metric == key {
			return f, true
		}
	}
	return Figure{}, false
}
