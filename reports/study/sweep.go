package study

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// Simulate runs one configuration and measures it over w; with qoe, the
// streams are scored (QoE, fluidity) as run scores them. A run whose
// steady state is not conclusive is run again with twice the requests (or
// seconds of arrivals), up to w.MaxExtend times cfg's (Window).
func Simulate(cfg sim.Config, w Window, qoe bool) (Metrics, error) {
	m, _, err := simulate(cfg, w, qoe, sectioning{}, nil)
	return m, err
}

// simulate is Simulate; with sections.n > 0 it also returns the summaries
// of that many consecutive sections of the final run's window. Its runs
// take their histograms from sp and give them back once measured.
func simulate(cfg sim.Config, w Window, qoe bool, sections sectioning, sp *sim.Spares) (Metrics, []reports.Summary, error) {
	return simulateFrom(cfg, w, qoe, sections, 0, sp)
}

// simulateFrom is simulate starting at 2^from times the scenario's length
// (from ≤ log2 w.MaxExtend), for a probe whose neighbour needed that long:
// the shorter runs would only be rerun.
func simulateFrom(cfg sim.Config, w Window, qoe bool, sections sectioning, from int, sp *sim.Spares) (Metrics, []reports.Summary, error) {
	f0 := 1 << from
	if cfg.Workload.Requests > 0 {
		cfg.Workload.Requests *= f0
	} else {
		cfg.Workload.DurationS *= float64(f0)
	}
	for ext, f := from, f0; ; ext, f = ext+1, f*2 {
		m, secs, err := simulateOnce(cfg, w, qoe, sections, sp)
		if err != nil {
			return Metrics{}, nil, err
		}
		length := float64(cfg.Workload.Requests)
		if length == 0 {
			length = cfg.Workload.DurationS
		}
		m.Steady.Requests, m.Steady.Extensions = length, ext
		longer := cfg.Workload
		if longer.Requests > 0 {
			longer.Requests *= 2
		} else {
			longer.DurationS *= 2
		}
		// A run twice as long whose arrivals outlast the simulator's
		// horizon (a vanishing rate) is not tried: the run is the cap.
		if m.Steady.Conclusive() || 2*f > w.MaxExtend || length == 0 || longer.Validate() != nil {
			if !m.Steady.Conclusive() && ext > 0 {
				m.Unstable = fmt.Sprintf("%s (after %d doublings of the run, the cap)", m.Unstable, ext)
				m.Summary.StableNote = m.Unstable
			}
			return m, secs, nil
		}
		cfg.Workload = longer
	}
}

func simulateOnce(cfg sim.Config, w Window, qoe bool, sections sectioning, sp *sim.Spares) (Metrics, []reports.Summary, error) {
	// A point reports no worst streams: the run need not keep their
	// timelines (metrics.worst_streams changes no figure).
	cfg.Metrics.WorstStreams = 0
	e, err := sim.NewReusing(cfg, sp)
	if err != nil {
		return Metrics{}, nil, err
	}
	res, err := RunScored(e, qoe, nil)
	if err != nil {
		return Metrics{}, nil, err
	}
	m, secs := measure(e.Setup().Config, res, e.ServerResult(), w, sections)
	// The metrics and summaries hold none of the run's series or
	// by-position histograms: the next run may have them.
	e.Release()
	return m, secs, nil
}

// sectioning is how a run's window is summarised in sections: n of them
// (none when 0), each drawing only the per-stream populations pops (the
// sections are read for the SLO terms' bounds alone).
type sectioning struct {
	n    int
	pops []reports.Population
}

// sectionsFor is how a run under condition c is summarised in sections:
// Sections for SLO terms (their bounds), with the populations the terms
// read; else none.
func sectionsFor(c Condition) sectioning {
	ts, ok := c.(Terms)
	if !ok {
		return sectioning{}
	}
	pops := []reports.Population{}
	for _, t := range ts {
		if p, ok := t.Population(); ok && !slices.Contains(pops, p) {
			pops = append(pops, p)
		}
	}
	return sectioning{n: Sections, pops: pops}
}

// scoresQoE tells whether condition c needs the streams' scores.
func scoresQoE(c Condition) bool {
	ts, ok := c.(Terms)
	return ok && ts.scoresQoE()
}

// CheckRated refuses a configuration whose load is not set by
// workload.rate: a closed loop (its users set the load) or a trace that
// brings its own arrival times.
func CheckRated(cfg sim.Config) error {
	wl := cfg.Workload
	switch {
	case wl.Arrival == "closed":
		return errors.New("workload.arrival closed: the users and think time set the load, not workload.rate; use an open arrival process (poisson, constant, gamma, weibull)")
	case wl.Trace != "" && wl.Format != "lengths":
		return fmt.Errorf("workload.trace %s: a trace brings its own arrival times; its load is not set by workload.rate (use workload.target_rate with run, or a lengths-only trace)", wl.Trace)
	}
	return nil
}

// SweepPlan is a sweep's grid: every configuration at every rate with
// every seed.
type SweepPlan struct {
	Configs []scenario.Variant
	Rates   []float64 // requests/s, in the order given
	Seeds   []uint64
	Window  Window
	// KneeDrop is the fall of tokens/s per user from light load that marks
	// the knee, as a share (0.2: 20 % below).
	KneeDrop float64
	// Terms, when set, judge every point (Point.Pass, Limiting, Outcomes).
	Terms Condition
}

// PointSpec is one simulation of a sweep.
type PointSpec struct {
	Config    int // index into SweepPlan.Configs
	Rate      float64
	Seed      uint64
	Simulated sim.Config
}

// Points lists the plan's simulations in canonical order: configuration
// (as given), then rate, then seed.
func (p *SweepPlan) Points() []PointSpec {
	var out []PointSpec
	for ci, v := range p.Configs {
		for _, r := range p.Rates {
			for _, s := range p.Seeds {
				cfg := v.Config
				cfg.Workload.Rate = r
				cfg.Seed = s
				out = append(out, PointSpec{Config: ci, Rate: r, Seed: s, Simulated: cfg})
			}
		}
	}
	return out
}

// Validate checks the plan before any simulation.
func (p *SweepPlan) Validate() error {
	if len(p.Configs) == 0 || len(p.Rates) == 0 || len(p.Seeds) == 0 {
		return errors.New("sweep: nothing to run (no configuration, rate or seed)")
	}
	if !(p.KneeDrop > 0 && p.KneeDrop < 1) {
		return fmt.Errorf("--knee-drop: expected a share in (0, 1), got %g", p.KneeDrop)
	}
	for _, v := range p.Configs {
		if err := CheckRated(v.Config); err != nil {
			return err
		}
	}
	return p.Window.Validate()
}

// Point is one simulated point of a sweep or a capacity search.
type Point struct {
	Config    string            `json:"config"`
	Overrides map[string]string `json:"overrides"`
	Rate      float64           `json:"rate"`
	Seed      uint64            `json:"seed"`
	// Pass and Limiting are set on a capacity search's probes: whether
	// every SLO term held and the run was stable, and the term that failed
	// first (or, on a pass, came closest).
	Pass     *bool     `json:"pass,omitempty"`
	Limiting string    `json:"limiting_term,omitempty"`
	Outcomes []Outcome `json:"slo,omitempty"`
	// Bounds are the SLO terms' confidence bounds (Bound): a point holds
	// only when every bound meets its limit.
	Bounds []Bound `json:"slo_bounds,omitempty"`
	Metrics
}

func overridesOf(v scenario.Variant) map[string]string {
	m := map[string]string{}
	for _, o := range v.Overrides {
		m[o.Path] = o.Value
	}
	return m
}

// PointOf labels metrics m as the point spec s of plan p.
func (p *SweepPlan) PointOf(s PointSpec, m Metrics) Point {
	v := p.Configs[s.Config]
	return Point{Config: v.Name, Overrides: overridesOf(v), Rate: s.Rate, Seed: s.Seed, Metrics: m}
}

// RunPoints simulates the given points of plan p on workers goroutines, in
// the order given.
func RunPoints(p *SweepPlan, specs []PointSpec, workers int, progress Progress) ([]Point, error) {
	sp := new(sim.Spares) // the points' runs share their histograms
	return Map(len(specs), workers, func(i int) (Point, error) {
		s := specs[i]
		m, secs, err := simulate(s.Simulated, p.Window, scoresQoE(p.Terms), sectionsFor(p.Terms), sp)
		if err != nil {
			return Point{}, fmt.Errorf("%s at %g req/s, seed %d: %w", p.Configs[s.Config].Name, s.Rate, s.Seed, err)
		}
		pt := p.PointOf(s, m)
		if p.Terms != nil {
			pass, lim, outs, bounds := Judge(p.Terms, &pt.Metrics, secs)
			pt.Pass, pt.Limiting, pt.Outcomes, pt.Bounds = &pass, lim, outs, bounds
		}
		return pt, nil
	}, progress)
}

// SaturationRule says how a sweep's saturation point and knee are read
// from its points, for the output.
const SaturationRule = "saturation_rate is fitted to every point (all seeds): achieved = min(offered, c) by least squares, c the rate where throughput stops tracking offered load; its interval is Student's t 95 % over the achieved rates of the points above c. knee_rate is where the piecewise-linear curve through the stable rates' medians first crosses tokens/s per user --knee-drop below the lowest rate's, or TTFT p99 twice the lowest rate's. A point with too few arrivals to judge is not called stable."

// Saturation is one configuration's reading of a sweep.
type Saturation struct {
	Config    string            `json:"config"`
	Overrides map[string]string `json:"overrides"`
	// SaturationRate is the fitted rate where throughput stops tracking
	// offered load (SaturationRule), with its interval (null with fewer
	// than 2 points above it); null when the fit puts it above the sweep.
	SaturationRate   *float64 `json:"saturation_rate"`
	SaturationCILow  *float64 `json:"saturation_ci_low"`
	SaturationCIHigh *float64 `json:"saturation_ci_high"`
	// HighestStable is the highest swept rate below which every rate was
	// stable on every seed; 0 when the lowest rate already was not.
	HighestStable float64 `json:"highest_stable_rate"`
	// Saturated is true when some swept rate was not stable: the
	// saturation point lies within the sweep.
	Saturated bool `json:"saturated"`
	// KneeRate is the interpolated rate at which the median tokens/s per
	// user fell KneeDrop below the lowest rate's, or the median TTFT p99
	// doubled (SaturationRule); 0 when neither happened. KneeReason says
	// which.
	KneeRate   float64 `json:"knee_rate"`
	KneeReason string  `json:"knee_reason,omitempty"`
	// MaxOutputTokensPerS is the highest median system tokens/s among the
	// stable rates.
	MaxOutputTokensPerS float64 `json:"max_output_tokens_per_s"`
	Words               string  `json:"words"`
}

// SweepResult is a sweep's JSON document.
type SweepResult struct {
	Points  []Point      `json:"points"`
	Rule    string       `json:"rule"`
	Configs []Saturation `json:"configs"`
}

// fitSaturation fits achieved = min(offered, c) to the points (x offered,
// y achieved) by least squares: for c between consecutive sorted rates
// the best c is the mean achieved rate of the points above, clipped to
// the segment. It returns c and the achieved rates of the points above
// it; ok is false when the best fit puts c at or above the highest rate
// (throughput tracks offered load everywhere).
func fitSaturation(x, y []float64) (c float64, above []float64, ok bool) {
	xs := slices.Clone(x)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	best := math.Inf(1)
	for k := -1; k < len(xs)-1; k++ {
		lo, hi := 0.0, xs[k+1]
		if k >= 0 {
			lo = xs[k]
		}
		var sum float64
		var n int
		for i := range x {
			if x[i] > lo {
				sum += y[i]
				n++
			}
		}
		cand := min(max(sum/float64(n), lo), hi)
		var sse float64
		for i := range x {
			d := y[i] - min(x[i], cand)
			sse += d * d
		}
		if sse < best {
			best, c = sse, cand
		}
	}
	// Tracking everywhere: c at the top rate fits as well as any.
	var top float64
	for i := range x {
		d := y[i] - x[i]
		top += d * d
	}
	if top <= best*(1+1e-9) || c >= xs[len(xs)-1] {
		return 0, nil, false
	}
	for i := range x {
		if x[i] > c {
			above = append(above, y[i])
		}
	}
	return c, above, true
}

// crossing is the first x at which the piecewise-linear curve through
// (xs, ys) (sorted by x) crosses level going in direction down (falling
// below) or up (reaching it); 0 when it never does.
func crossing(xs, ys []float64, level float64, down bool) float64 {
	past := func(v float64) bool {
		if down {
			return v < level
		}
		return v >= level
	}
	for i := 1; i < len(xs); i++ {
		if past(ys[i]) {
			if ys[i] == ys[i-1] {
				return xs[i]
			}
			f := (level - ys[i-1]) / (ys[i] - ys[i-1])
			return sig6(xs[i-1] + min(max(f, 0), 1)*(xs[i]-xs[i-1]))
		}
	}
	return 0
}

// AnalyzeSweep reads the saturation point and the knee of every
// configuration from points (in the plan's canonical order).
func AnalyzeSweep(p *SweepPlan, points []Point) SweepResult {
	res := SweepResult{Points: points, Rule: SaturationRule}
	per := len(p.Rates) * len(p.Seeds)
	for ci, v := range p.Configs {
		pts := points[ci*per : (ci+1)*per]
		sat := Saturation{Config: v.Name, Overrides: overridesOf(v)}
		type level struct {
			rate, userRate, ttft99, tokens float64
			stable                         bool
			why                            string
		}
		levels := make([]level, len(p.Rates))
		var offered, achieved []float64
		for ri, r := range p.Rates {
			seeds := pts[ri*len(p.Seeds) : (ri+1)*len(p.Seeds)]
			l := level{rate: r, stable: true}
			var ur, tt, tok []float64
			for _, s := range seeds {
				ur = append(ur, s.TokensPerSPerUser.Mean)
				tt = append(tt, s.Summary.TTFT.P99)
				tok = append(tok, s.OutputTokensPerS)
				offered = append(offered, r)
				achieved = append(achieved, s.AchievedPerS)
				if !s.Stable && l.stable {
					l.stable, l.why = false, fmt.Sprintf("seed %d: %s", s.Seed, s.Unstable)
				}
			}
			l.userRate, l.ttft99, l.tokens = median(ur), median(tt), median(tok)
			levels[ri] = l
		}
		order := make([]int, len(levels))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(levels[a].rate, levels[b].rate) })
		var words []string
		light := levels[order[0]]
		var xs, urs, tts []float64
		for _, i := range order {
			l := levels[i]
			if !l.stable {
				sat.Saturated = true
				words = append(words, fmt.Sprintf("not stable from %s req/s (%s)", num(l.rate), l.why))
				break
			}
			sat.HighestStable = l.rate
			sat.MaxOutputTokensPerS = max(sat.MaxOutputTokensPerS, sig6(l.tokens))
			xs, urs, tts = append(xs, l.rate), append(urs, l.userRate), append(tts, l.ttft99)
		}
		if len(xs) > 1 {
			ku := crossing(xs, urs, (1-p.KneeDrop)*light.userRate, true)
			kt := 0.0
			if light.ttft99 > 0 {
				kt = crossing(xs, tts, 2*light.ttft99, false)
			}
			switch {
			case ku > 0 && (kt == 0 || ku <= kt):
				sat.KneeRate = ku
				sat.KneeReason = fmt.Sprintf("tokens/s per user fell %.0f %% below light load (%s tokens/s)", 100*p.KneeDrop, num(light.userRate))
			case kt > 0:
				sat.KneeRate = kt
				sat.KneeReason = fmt.Sprintf("TTFT p99 doubled from light load (%s ms)", num(light.ttft99))
			}
		}
		if c, above, ok := fitSaturation(offered, achieved); ok {
			c = sig6(c)
			sat.SaturationRate = &c
			if mean, half := tInterval(above); !math.IsInf(half, 0) {
				lo, hi := sig6(max(mean-half, 0)), sig6(mean+half)
				sat.SaturationCILow, sat.SaturationCIHigh = &lo, &hi
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: ", v.Name)
		switch {
		case sat.SaturationRate != nil:
			fmt.Fprintf(&b, "saturates at %s req/s (fitted", num(*sat.SaturationRate))
			if sat.SaturationCILow != nil {
				fmt.Fprintf(&b, "; 95 %% CI %s to %s", num(*sat.SaturationCILow), num(*sat.SaturationCIHigh))
			} else {
				b.WriteString("; no interval: fewer than 2 points above it")
			}
			b.WriteString(")")
		case sat.Saturated:
			b.WriteString("throughput tracks offered load at every rate, but not every rate is stable")
		default:
			b.WriteString("throughput tracks offered load at every swept rate: the saturation point is above the sweep")
		}
		switch {
		case sat.HighestStable == 0:
			fmt.Fprintf(&b, "; not stable already at the lowest rate, %s req/s", num(light.rate))
		default:
			fmt.Fprintf(&b, "; stable up to %s req/s (%s output tokens/s)", num(sat.HighestStable), num(sat.MaxOutputTokensPerS))
		}
		if len(words) > 0 {
			fmt.Fprintf(&b, ", %s", words[0])
		}
		if sat.KneeRate > 0 {
			fmt.Fprintf(&b, "; knee at %s req/s: %s", num(sat.KneeRate), sat.KneeReason)
		} else if sat.HighestStable > 0 {
			fmt.Fprintf(&b, "; no knee among the stable rates (tokens/s per user within %.0f %% of light load, TTFT p99 below twice)", 100*p.KneeDrop)
		}
		b.WriteString(".")
		sat.Words = b.String()
		res.Configs = append(res.Configs, sat)
	}
	return res
}

// median is the middle value; for an even count the lower of the two
// middle values (the conservative one for a capacity).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// num writes a figure for prose: up to 3 significant digits below 1000,
// whole numbers above.
func num(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// ParseRates reads --rate: "A:B:STEP" (A, A+STEP, ... up to B) or a comma
// list "r1,r2,...". Every rate must be > 0.
func ParseRates(s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("--rate: expected A:B:STEP or r1,r2,..., got nothing")
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("--rate %q: expected A:B:STEP (from A to B in steps of STEP)", s)
		}
		var v [3]float64
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("--rate %q: %q is not a number", s, p)
			}
			v[i] = f
		}
		a, b, step := v[0], v[1], v[2]
		switch {
		case a <= 0:
			return nil, fmt.Errorf("--rate %q: the first rate must be > 0 req/s", s)
		case b < a:
			return nil, fmt.Errorf("--rate %q: the last rate %g is below the first %g", s, b, a)
		case step <= 0:
			return nil, fmt.Errorf("--rate %q: the step must be > 0", s)
		case (b-a)/step > 1000:
			return nil, fmt.Errorf("--rate %q: %g rates; at most 1000", s, math.Floor((b-a)/step)+1)
		}
		var out []float64
		for k := 0; ; k++ {
			r := a + float64(k)*step
			if r > b*(1+1e-9) {
				break
			}
			out = append(out, sig6(r)) // 0.1 steps: 0.3, not 0.30000000000000004
		}
		return out, nil
	}
	var out []float64
	seen := map[float64]bool{}
	for p := range strings.SplitSeq(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("--rate %q: %q is not a number", s, p)
		}
		if f <= 0 {
			return nil, fmt.Errorf("--rate %q: %g: every rate must be > 0 req/s", s, f)
		}
		if seen[f] {
			return nil, fmt.Errorf("--rate %q: %g is given twice", s, f)
		}
		seen[f] = true
		out = append(out, f)
	}
	return out, nil
}

// SeedList is K seeds from base: base, base+1, ..., base+K−1.
func SeedList(base uint64, k int) []uint64 {
	out := make([]uint64, k)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}
