package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// Param is one scenario field a tuning may move, within bounds.
type Param struct {
	Path   string // scenario field path, e.g. cost.roofline.overhead_us
	Lo, Hi float64
}

// TunableParams are the fields `itlsim calibrate --measured` may fit, by
// path, with the range searched.
var TunableParams = map[string]Param{
	"cost.roofline.compute_efficiency":    {"cost.roofline.compute_efficiency", 0.2, 1},
	"cost.roofline.memory_efficiency":     {"cost.roofline.memory_efficiency", 0.2, 1},
	"cost.roofline.overhead_us":           {"cost.roofline.overhead_us", 0, 20000},
	"cost.roofline.seq_overhead_us":       {"cost.roofline.seq_overhead_us", 0, 500},
	"cost.roofline.all_reduce_latency_us": {"cost.roofline.all_reduce_latency_us", 0, 200},
	// The kernel floors: per GEMM or elementwise kernel eagerly, per
	// attention call, and per kernel replayed in a CUDA graph.
	"cost.roofline.kernel_overhead_us":       {"cost.roofline.kernel_overhead_us", 0, 50},
	"cost.roofline.attention_overhead_us":    {"cost.roofline.attention_overhead_us", 0, 200},
	"cost.roofline.graph_kernel_overhead_us": {"cost.roofline.graph_kernel_overhead_us", 0, 50},
	"server.request_overhead_ms":             {"server.request_overhead_ms", 0, 500},
	"server.serial_ms_per_request":           {"server.serial_ms_per_request", 0, 50},
	"server.serial_us_per_prompt_token":      {"server.serial_us_per_prompt_token", 0, 100},
	// Detokenization moves a figure only where it is on the engine's
	// critical path (server.detokenize_in_engine, vLLM V0).
	"server.detokenize_us_per_output_token": {"server.detokenize_us_per_output_token", 0, 200},
	// The step-time variance: per-step lognormal jitter and rare long
	// steps (a Poisson rate and a length). Only the tails of the ITL and
	// TTFT distributions show them, so fit them with runs whose tails
	// were measured.
	"cost.noise_cv":          {"cost.noise_cv", 0, 0.5},
	"cost.hiccup_rate_per_s": {"cost.hiccup_rate_per_s", 0, 5},
	"cost.hiccup_ms":         {"cost.hiccup_ms", 0, 500},
}

// TunableNames lists TunableParams' keys, sorted.
func TunableNames() []string {
	var n []string
	for k := range TunableParams {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// DefaultTuned are the fields always fitted when none are named: the
// roofline's efficiencies and overheads and the server's fixed overhead.
// The front end's constants (FrontEndParams) join them only where the
// measured runs separate each from these (Identify): at light load an
// isolated request's serial work and the fixed latency add the same to its
// TTFT, so one run at 1 req/s cannot tell them apart, while a burst of
// arrivals queues for the serial part alone.
var DefaultTuned = []string{"cost.roofline.compute_efficiency", "cost.roofline.memory_efficiency",
	"cost.roofline.overhead_us", "cost.roofline.seq_overhead_us", "server.request_overhead_ms"}

// GraphTuned join DefaultTuned when the roofline replays CUDA graphs
// (cost.enforce_eager false): the floor of a kernel replayed in a graph
// and, for the steps beyond the largest captured size, run eagerly, the
// eager one. Fitted out of sample on the shared vLLM 0.8.3 runs, which
// replayed graphs, they bring the leave-one-out table from 10 cells out of
// bounds to 4, as many as the eager fit (docs/fidelity.md, "CUDA graphs").
var GraphTuned = []string{"cost.roofline.graph_kernel_overhead_us", "cost.roofline.kernel_overhead_us"}

// TargetMetrics are the figures a tuning minimises the error of: the mean
// of squared log ratios simulated/measured.
var TargetMetrics = []string{"ttft_p50_ms", "ttft_p90_ms", "tpot_p50_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms", "stream_p99_itl_p50_ms"}

// TuneOptions control a tuning.
type TuneOptions struct {
	Params []string // field paths (keys of TunableParams); nil: DefaultTuned
	// FrontEnd, with Params nil, adds each field of FrontEndParams not in
	// Hold to the fit when the runs separate it from the others
	// (Identify), and holds it at its value otherwise; TuneResult.FrontEnd
	// says which and why.
	FrontEnd bool
	// Extra, with Params nil, are fitted beside DefaultTuned (and the
	// front end's separable fields).
	Extra []string
	// Hold are fields the user set: FrontEnd leaves them as given.
	Hold     []string
	Evals    int // simulations budget (each over Validate.Seeds seeds); default 300
	Validate Options
	// Progress, when not nil, is told after each simulation of the fit
	// how many of Evals are done.
	Progress func(done, total int)
}

// TuneResult is a tuning's outcome.
type TuneResult struct {
	Config        sim.Config // the scenario with the fitted values
	Values        map[string]float64
	Before, After []Comparison
	LossBefore    float64
	LossAfter     float64
	Evals         int
	// FrontEnd is the front end's identification (with
	// TuneOptions.FrontEnd), nil otherwise.
	FrontEnd *Identification
}

// loss is the mean squared log error of the target figures over runs;
// figures a run cannot give (no gaps) are left out.
func loss(cmps []Comparison) float64 {
	var s float64
	n := 0
	for i := range cmps {
		for _, key := range TargetMetrics {
			f, ok := cmps[i].Figure(key)
			if !ok || f.Error == nil || f.Simulated <= 0 {
				continue
			}
			d := math.Log(f.Simulated / f.Measured)
			s += d * d
			n++
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return s / float64(n)
}

// Tune fits the named fields of base so that simulating recs reproduces
// their measured TTFT, TPOT and ITL percentiles, with the simulation in the
// loop: Nelder–Mead (gonum/optimize) over each field mapped onto its range
// by a logistic, starting from base's values.
func Tune(base sim.Config, recs []ingest.Recording, o TuneOptions) (*TuneResult, error) {
	names := o.Params
	var id *Identification
	if len(names) == 0 {
		names = slices.Clone(DefaultTuned)
		if base.Cost.Model == "roofline" && !base.Cost.EnforceEager {
			// Under CUDA graphs the kernel floors are not the eager
			// ones the defaults were set against: fit them too.
			names = append(names, GraphTuned...)
		}
		for _, p := range o.Extra {
			if !slices.Contains(names, p) {
				names = append(names, p)
			}
		}
		if o.FrontEnd {
			for _, p := range o.Extra {
				if _, ok := TunableParams[p]; !ok {
					return nil, fmt.Errorf("unknown field %q to fit; valid: %s", p, strings.Join(TunableNames(), ", "))
				}
			}
			var cand []string
			for _, p := range FrontEndParams {
				if !slices.Contains(names, p) {
					cand = append(cand, p)
				}
			}
			var err error
			if id, err = Identify(base, recs, names, cand, o.Hold, o.Validate); err != nil {
				return nil, fmt.Errorf("front end: %w", err)
			}
			names = append(names, id.Fit()...)
		}
	}
	params := make([]Param, len(names))
	for i, n := range names {
		p, ok := TunableParams[n]
		if !ok {
			return nil, fmt.Errorf("unknown field %q to fit; valid: %s", n, strings.Join(TunableNames(), ", "))
		}
		params[i] = p
	}
	if o.Evals <= 0 {
		o.Evals = 300
	}
	if base.Cost.Model != "roofline" {
		for _, p := range params {
			if strings.HasPrefix(p.Path, "cost.roofline.") {
				return nil, fmt.Errorf("fitting %s needs cost.model roofline, got %q", p.Path, base.Cost.Model)
			}
		}
	}
	start := make([]float64, len(params))
	for i, p := range params {
		v, err := FieldValue(base, p.Path)
		if err != nil {
			return nil, err
		}
		// A field at its bound (an overhead of 0) starts a little inside,
		// where the logistic is not flat.
		v = min(max(v, p.Lo+0.02*(p.Hi-p.Lo)), p.Hi-0.02*(p.Hi-p.Lo))
		start[i] = logit((v - p.Lo) / (p.Hi - p.Lo))
	}
	apply := func(x []float64) (sim.Config, map[string]float64, error) {
		c := base
		vals := map[string]float64{}
		for i, p := range params {
			v := p.Lo + (p.Hi-p.Lo)*sigmoid(x[i])
			vals[p.Path] = v
			if err := scenario.Set(&c, p.Path, fmt.Sprintf("%g", v)); err != nil {
				return c, nil, err
			}
		}
		return c, vals, nil
	}
	run := func(c sim.Config) ([]Comparison, error) {
		setup, err := c.Resolve()
		if err != nil {
			return nil, err
		}
		return Validate(setup, recs, o.Validate)
	}
	if o.Progress != nil {
		o.Progress(0, o.Evals)
	}
	before, err := run(base)
	if err != nil {
		return nil, err
	}
	var simErr error
	evals := 0
	problem := optimize.Problem{Func: func(x []float64) float64 {
		evals++
		c, _, err := apply(x)
		if err != nil {
			simErr = err
			return math.Inf(1)
		}
		cmps, err := run(c)
		if o.Progress != nil {
			o.Progress(min(evals, o.Evals), o.Evals)
		}
		if err != nil {
			simErr = err
			return math.Inf(1)
		}
		return loss(cmps)
	}}
	settings := &optimize.Settings{FuncEvaluations: o.Evals, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 60}}
	res, err := optimize.Minimize(problem, start, settings, &optimize.NelderMead{SimplexSize: 1})
	if simErr != nil {
		return nil, simErr
	}
	if err != nil && res == nil {
		return nil, err
	}
	x := res.X
	if lb := loss(before); res.F > lb {
		x = start // never worse than where it started
	}
	c, vals, err := apply(x)
	if err != nil {
		return nil, err
	}
	after, err := run(c)
	if err != nil {
		return nil, err
	}
	return &TuneResult{Config: c, Values: vals, Before: before, After: after, LossBefore: loss(before), LossAfter: loss(after), Evals: evals, FrontEnd: id}, nil
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
func logit(p float64) float64   { return math.Log(p / (1 - p)) }

// FieldValue reads a fittable scenario field by path.
func FieldValue(c sim.Config, path string) (float64, error) {
	if strings.HasPrefix(path, "cost.roofline.") {
		r := c.Cost.Roofline
		p, err := rooflineField(&r, path)
		if err != nil {
			return 0, fmt.Errorf("field %s cannot be fitted", path)
		}
		return *p, nil
	}
	if strings.HasPrefix(path, "server.") {
		// The front end as it runs: a profile (server.frontend) fills
		// the fields left at 0 or at their defaults.
		s, err := c.Server.Resolved()
		if err != nil {
			return 0, err
		}
		switch path {
		case "server.request_overhead_ms":
			return s.RequestOverheadMS, nil
		case "server.serial_ms_per_request":
			return s.SerialMSPerRequest, nil
		case "server.serial_us_per_prompt_token":
			return s.SerialUSPerPromptToken, nil
		case "server.detokenize_us_per_output_token":
			return s.DetokenizeUSPerOutputToken, nil
		}
	}
	switch path {
	case "cost.noise_cv":
		return c.Cost.NoiseCV, nil
	case "cost.hiccup_rate_per_s":
		return c.Cost.HiccupRatePerS, nil
	case "cost.hiccup_ms":
		return c.Cost.HiccupMS, nil
	}
	return 0, fmt.Errorf("field %s cannot be fitted", path)
}

// ProfileOf is the profile of a tuned scenario.
func ProfileOf(c sim.Config, source string) *Profile {
	p := &Profile{Model: c.Model, GPU: c.GPU, TP: c.TP, Source: source, Cost: ProfileCost{Model: c.Cost.Model}}
	if c.Cost.Model == "linear" {
		l := c.Cost.Linear
		p.Cost.Linear = &l
	} else {
		r := c.Cost.Roofline
		p.Cost.Roofline = &r
	}
	if c.Server.On() {
		s := c.Server
		p.Server = &s
	}
	if v := c.Cost.NoiseCV; v > 0 {
		p.Cost.NoiseCV = &v
	}
	if r, ms := c.Cost.HiccupRatePerS, c.Cost.HiccupMS; r > 0 {
		p.Cost.HiccupRatePerS, p.Cost.HiccupMS = &r, &ms
	}
	return p
}
