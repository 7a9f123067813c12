package workloads

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Names of the rate curves, the KIND in Config.RateCurve's "KIND:PARAMS".
const (
	CurveOnOff  = "onoff"
	CurveSine   = "sine"
	CurvePoints = "points"
	CurveCycle  = "cycle"
)

// A rate curve modulates an arrival process over time: the instantaneous
// rate is Rate × m(t) for a multiplier m(t) ≥ 0. The process is generated
// in "operational time", where its rate is constant, and each arrival at
// operational time u is placed at the real time t with ∫₀ᵗ m(s) ds = u
// (a time change). For Poisson arrivals this is exactly the
// non-homogeneous Poisson process of rate Rate·m(t); gamma and Weibull
// arrivals keep their coefficient of variation locally.
type curve interface {
	// inverse returns the real time t (ns) at which ∫₀ᵗ m reaches u (ns),
	// or +Inf when it never does (the curve drops to zero for good). It is
	// non-decreasing in u.
	inverse(u float64) float64
}

// meanMultiplier returns the curve's mean multiplier over [0, T] ns,
// Λ(T)/T with Λ(T) = ∫₀ᵀ m, found from inverse by bisection (inverse is
// non-decreasing; multipliers are at most 1e6, so Λ(T) ≤ 1e6·T).
func meanMultiplier(c curve, T float64) float64 {
	if !(T > 0) {
		return 1
	}
	lo, hi := 0.0, T
	for range 21 { // 2^21 > 1e6
		if !(c.inverse(hi) <= T) {
			break
		}
		lo, hi = hi, 2*hi
	}
	for range 60 {
		mid := (lo + hi) / 2
		if c.inverse(mid) <= T {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo / T
}

// curveSpec says how one curve kind is written and parsed.
type curveSpec struct {
	params, describe string
	parse            func(args []string) (curve, error)
}

// curveKinds is the registry of rate curves; CurveKinds derives from it.
func curveKinds() map[string]curveSpec {
	return map[string]curveSpec{
		CurveOnOff: {"ON_S,OFF_S", "bursts: ON_S seconds at Rate·(ON_S+OFF_S)/ON_S, then OFF_S seconds of silence, repeated; the mean rate stays Rate",
			parseOnOff},
		CurveSine: {"PERIOD_S,AMPLITUDE[,PHASE_S]", "Rate·(1 + AMPLITUDE·sin(2π(t+PHASE_S)/PERIOD_S)), AMPLITUDE in [0,1]; the mean rate stays Rate",
			parseSine},
		CurvePoints: {"T=M,T=M,...", "piecewise-linear multipliers M of Rate at times T seconds (the first at 0), held after the last",
			func(args []string) (curve, error) { return parsePoints(args, false) }},
		CurveCycle: {"T=M,T=M,...", "as points, repeated with the period of the last T (a 24 h curve ending at 86400 repeats daily)",
			func(args []string) (curve, error) { return parsePoints(args, true) }},
	}
}

// CurveKinds returns the valid rate curve kinds, sorted.
func CurveKinds() []string {
	names := make([]string, 0, 4)
	for name := range curveKinds() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// DescribeCurve returns the form and a one-line description of a curve kind.
func DescribeCurve(kind string) (form, describe string, ok bool) {
	s, ok := curveKinds()[kind]
	return kind + ":" + s.params, s.describe, ok
}

// parseCurve parses a rate curve spec; "" gives a nil curve (constant rate).
func parseCurve(spec string) (curve, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	kind, params, ok := strings.Cut(spec, ":")
	kind = strings.TrimSpace(kind)
	cs, known := curveKinds()[kind]
	if !ok || !known {
		return nil, fmt.Errorf("expected KIND:PARAMS with KIND one of %s (e.g. \"sine:86400,0.5\"), got %q",
			strings.Join(CurveKinds(), ", "), spec)
	}
	args := strings.Split(params, ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	c, err := cs.parse(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (form %s:%s)", kind, err, kind, cs.params)
	}
	return c, nil
}

// curveSeconds reads a duration in seconds in [min, maxHorizonS].
func curveSeconds(name, s string, min float64) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x >= min) || x > maxHorizonS {
		return 0, fmt.Errorf("%s must be a number of seconds in [%g, %g], got %q", name, min, float64(maxHorizonS), s)
	}
	return x, nil
}

// onOff is a square wave: on for onNs at multiplier periodNs/onNs, then off
// for the rest of the period. It starts on at t = 0.
type onOff struct {
	onNs, periodNs float64
}

func parseOnOff(args []string) (curve, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("expected 2 parameters, got %d", len(args))
	}
	on, err := curveSeconds("ON_S", args[0], 1e-6)
	if err != nil {
		return nil, err
	}
	off, err := curveSeconds("OFF_S", args[1], 0)
	if err != nil {
		return nil, err
	}
	return onOff{onNs: on * 1e9, periodNs: (on + off) * 1e9}, nil
}

// inverse: each period holds periodNs of operational time, all of it
// spent during the on part.
func (c onOff) inverse(u float64) float64 {
	k := math.Floor(u / c.periodNs)
	return k*c.periodNs + (u-k*c.periodNs)*c.onNs/c.periodNs
}

// sine is m(t) = 1 + a·sin(2π(t+φ)/P), with a ≤ 1 so m ≥ 0.
type sine struct {
	periodNs, amp, phaseNs float64
}

func parseSine(args []string) (curve, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, fmt.Errorf("expected 2 or 3 parameters, got %d", len(args))
	}
	period, err := curveSeconds("PERIOD_S", args[0], 1e-3)
	if err != nil {
		return nil, err
	}
	amp, err := strconv.ParseFloat(args[1], 64)
	if err != nil || !(amp >= 0 && amp <= 1) {
		return nil, fmt.Errorf("AMPLITUDE must be a number in [0, 1], got %q", args[1])
	}
	var phase float64
	if len(args) == 3 {
		if phase, err = curveSeconds("PHASE_S", args[2], 0); err != nil {
			return nil, err
		}
	}
	return sine{periodNs: period * 1e9, amp: amp + 0, phaseNs: math.Mod(phase*1e9, period*1e9)}, nil
}

// integral returns Λ(t) = ∫₀ᵗ m = t − aP/2π·(cos(2π(t+φ)/P) − cos(2πφ/P)).
func (c sine) integral(t float64) float64 {
	w := 2 * math.Pi / c.periodNs
	return t - c.amp/w*(math.Cos(w*(t+c.phaseNs))-math.Cos(w*c.phaseNs))
}

// inverse bisects Λ, which is non-decreasing and within aP/π of the
// identity, to below a nanosecond.
func (c sine) inverse(u float64) float64 {
	if c.amp == 0 {
		return u
	}
	span := c.amp * c.periodNs / math.Pi
	lo, hi := max(0, u-span), u+span
	for range 100 {
		if hi-lo < 0.25 {
			break
		}
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi { // no float between them
			break
		}
		if c.integral(mid) < u {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// points is a piecewise-linear multiplier through (t[i], m[i]), t[0] = 0,
// held at m[last] after t[last], or repeated with period t[last] (cycle).
type points struct {
	t, m  []float64 // knots: times in ns, multipliers
	cum   []float64 // cum[i] = ∫₀^t[i] m
	cycle bool
}

func parsePoints(args []string, cycle bool) (curve, error) {
	c := &points{cycle: cycle}
	for i, a := range args {
		ts, ms, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("point %d: expected T=M (seconds=multiplier), got %q", i+1, a)
		}
		t, err := curveSeconds("T", strings.TrimSpace(ts), 0)
		if err != nil {
			return nil, fmt.Errorf("point %d: %w", i+1, err)
		}
		m, err := strconv.ParseFloat(strings.TrimSpace(ms), 64)
		if err != nil || !(m >= 0) || m > 1e6 {
			return nil, fmt.Errorf("point %d: M must be a multiplier in [0, 1e6], got %q", i+1, ms)
		}
		switch {
		case i == 0 && t != 0:
			return nil, fmt.Errorf("point 1: the first point must be at T=0, got %q", ts)
		case i > 0 && t*1e9 <= c.t[i-1]:
			return nil, fmt.Errorf("point %d: times must increase, got %g s after %g s", i+1, t, c.t[i-1]/1e9)
		}
		c.t = append(c.t, t*1e9)
		c.m = append(c.m, m+0)
	}
	if cycle && len(c.t) < 2 {
		return nil, fmt.Errorf("needs at least two points, the last giving the period")
	}
	c.cum = make([]float64, len(c.t))
	for i := 1; i < len(c.t); i++ {
		c.cum[i] = c.cum[i-1] + (c.t[i]-c.t[i-1])*(c.m[i-1]+c.m[i])/2
	}
	last := len(c.t) - 1
	if c.cum[last] == 0 && (cycle || c.m[last] == 0) {
		return nil, fmt.Errorf("every multiplier is 0: no request would ever arrive")
	}
	return c, nil
}

func (c *points) inverse(u float64) float64 {
	last := len(c.t) - 1
	if c.cycle {
		total := c.cum[last]
		k := math.Floor(u / total)
		return k*c.t[last] + c.within(u-k*total)
	}
	if u >= c.cum[last] {
		if c.m[last] == 0 {
			return math.Inf(1)
		}
		return c.t[last] + (u-c.cum[last])/c.m[last]
	}
	return c.within(u)
}

// within inverts the integral for 0 ≤ u < cum[last].
func (c *points) within(u float64) float64 {
	// The segment [t[j], t[j+1]) with cum[j] ≤ u < cum[j+1]; it has mass.
	j, _ := slices.BinarySearch(c.cum, u)
	for j < len(c.cum) && c.cum[j] <= u {
		j++
	}
	j--
	if j >= len(c.t)-1 {
		return c.t[len(c.t)-1]
	}
	// m(t[j]+τ) = m0 + g·τ, so ∫ = m0·τ + g·τ²/2 = d; the root in the
	// form 2d/(m0 + √(m0² + 2gd)) is stable for g of either sign and 0.
	m0 := c.m[j]
	g := (c.m[j+1] - m0) / (c.t[j+1] - c.t[j])
	d := u - c.cum[j]
	den := m0 + math.Sqrt(max(0, m0*m0+2*g*d))
	if den == 0 {
		return c.t[j]
	}
	return min(c.t[j]+2*d/den, c.t[j+1])
}
