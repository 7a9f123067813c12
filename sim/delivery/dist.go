package delivery

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

// MaxMS bounds every value a Dist can name or draw, in milliseconds: about
// 2.8 hours, far beyond any delay worth simulating, and small enough that
// sums of many draws stay exact in int64 nanoseconds.
const MaxMS = 1e7

// Names of the duration distributions, the KIND in a "KIND:PARAMS" spec.
const (
	DistNone      = "none"
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistExp       = "exp"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
	DistPareto    = "pareto"
)

type distKind uint8

const (
	kindNone distKind = iota
	kindFixed
	kindUniform
	kindExp
	kindNormal
	kindLognormal
	kindPareto
)

// distForm says how one kind is written and how many parameters it takes.
type distForm struct {
	kind       distKind
	params     string // the PARAMS part as messages spell it
	minN, maxN int    // accepted parameter counts
	doc        string
}

// distForms is the registry of duration distributions; DistKinds and the
// unknown-kind message are derived from it.
var distForms = map[string]distForm{
	DistNone:      {kindNone, "", 0, 0, "always 0"},
	DistFixed:     {kindFixed, "MS", 1, 1, "always MS"},
	DistUniform:   {kindUniform, "MIN,MAX", 2, 2, "uniform in [MIN, MAX]"},
	DistExp:       {kindExp, "MEAN", 1, 1, "exponential with mean MEAN"},
	DistNormal:    {kindNormal, "MEAN,SD[,MIN,MAX]", 2, 4, "normal, clipped to [MIN, MAX] (default [0, MaxMS])"},
	DistLognormal: {kindLognormal, "MEAN,SD[,MAX]", 2, 3, "lognormal whose values (not logs) have mean MEAN and sd SD, clipped to MAX"},
	DistPareto:    {kindPareto, "MIN,ALPHA[,MAX]", 2, 3, "Pareto: P(X > x) = (MIN/x)^ALPHA for x ≥ MIN, clipped to MAX"},
}

// DistKinds lists the valid kinds, sorted.
func DistKinds() []string {
	out := make([]string, 0, len(distForms))
	for k := range distForms {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Dist is a distribution of durations in milliseconds, parsed from a spec
// by ParseDist. Every draw is in [0, MaxMS]. The zero Dist is "none": it
// always draws 0, and it is what a network profile fills (a spec such as
// "fixed:0" is not zero and overrides a profile). Dist is a comparable
// value; it marshals to its canonical spec, so it is a YAML scalar.
type Dist struct {
	kind distKind
	// a, b, lo, hi are the parameters as parsed: fixed MS=a; uniform
	// lo..hi; exp MEAN=a; normal MEAN=a SD=b within [lo, hi]; lognormal
	// MEAN=a SD=b, clipped to hi; pareto MIN=a ALPHA=b, clipped to hi.
	a, b, lo, hi float64
	n            int // parameters given, to print the canonical spec
	// mu and sigma are a lognormal's underlying normal parameters.
	mu, sigma float64
}

// ParseDist parses a duration distribution in milliseconds:
//
//	none                     always 0 (also the empty string)
//	MS                       a bare number: fixed:MS
//	fixed:MS                 always MS
//	uniform:MIN,MAX          uniform in [MIN, MAX]
//	exp:MEAN                 exponential with mean MEAN
//	normal:MEAN,SD[,MIN,MAX] a normal clipped to [MIN, MAX] (default [0, MaxMS])
//	lognormal:MEAN,SD[,MAX]  a lognormal whose values have mean MEAN and
//	                         standard deviation SD, clipped to MAX
//	pareto:MIN,ALPHA[,MAX]   a Pareto (type I): P(X > x) = (MIN/x)^ALPHA for
//	                         x ≥ MIN, clipped to MAX (heavy-tailed: its mean
//	                         is infinite for ALPHA ≤ 1)
//
// Every number is finite and in [0, MaxMS]; MEAN of exp and lognormal and
// MIN of pareto are > 0; ALPHA is in (0, 100]; MIN ≤ MAX. Clipping moves a
// draw onto the bound (it does not redraw).
func ParseDist(spec string) (Dist, error) {
	s := strings.TrimSpace(spec)
	if s == "" || s == DistNone {
		return Dist{}, nil
	}
	kindName, params, ok := strings.Cut(s, ":")
	kindName = strings.TrimSpace(kindName)
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return ParseDist(DistFixed + ":" + s)
		}
		return Dist{}, fmt.Errorf("expected KIND:PARAMS in milliseconds such as \"exp:5\", or a number (kinds: %s), got %q",
			strings.Join(DistKinds(), ", "), spec)
	}
	form, ok := distForms[kindName]
	if !ok {
		return Dist{}, fmt.Errorf("unknown distribution kind %q in %q; valid kinds: %s", kindName, spec, strings.Join(DistKinds(), ", "))
	}
	var args []float64
	if form.maxN > 0 {
		for f := range strings.SplitSeq(params, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || len(args) == form.maxN {
				return Dist{}, fmt.Errorf("%s: expected %s in milliseconds, got %q", kindName, form.params, params)
			}
			args = append(args, v)
		}
	} else if strings.TrimSpace(params) != "" {
		return Dist{}, fmt.Errorf("%s: takes no parameters, got %q", kindName, params)
	}
	if len(args) < form.minN {
		return Dist{}, fmt.Errorf("%s: expected %s in milliseconds, got %q", kindName, form.params, params)
	}
	d := Dist{kind: form.kind, n: len(args), lo: 0, hi: MaxMS}
	if err := d.set(args); err != nil {
		return Dist{}, fmt.Errorf("%s: %w", kindName, err)
	}
	return d, nil
}

// MustParseDist is ParseDist for specs known to be valid (profiles, tests);
// it panics on an invalid one.
func MustParseDist(spec string) Dist {
	d, err := ParseDist(spec)
	if err != nil {
		panic(err)
	}
	return d
}

func checkMS(name string, v float64) error {
	if !(v >= 0 && v <= MaxMS) {
		return fmt.Errorf("%s must be a number in [0, %g] ms, got %g", name, float64(MaxMS), v)
	}
	return nil
}

func (d *Dist) set(args []float64) error {
	names := map[distKind][]string{
		kindFixed: {"MS"}, kindUniform: {"MIN", "MAX"}, kindExp: {"MEAN"},
		kindNormal: {"MEAN", "SD", "MIN", "MAX"}, kindLognormal: {"MEAN", "SD", "MAX"}, kindPareto: {"MIN", "ALPHA", "MAX"},
	}[d.kind]
	for i, v := range args {
		if d.kind == kindPareto && i == 1 {
			if !(v > 0 && v <= 100) {
				return fmt.Errorf("ALPHA must be in (0, 100], got %g", v)
			}
			continue
		}
		if err := checkMS(names[i], v); err != nil {
			return err
		}
	}
	switch d.kind {
	case kindFixed:
		d.a = args[0]
	case kindUniform:
		d.lo, d.hi = args[0], args[1]
	case kindExp:
		d.a = args[0]
		if d.a <= 0 {
			return fmt.Errorf("MEAN must be > 0, got %g", d.a)
		}
	case kindNormal:
		d.a, d.b = args[0], args[1]
		if len(args) == 3 {
			return fmt.Errorf("expected MEAN,SD or MEAN,SD,MIN,MAX, got 3 numbers")
		}
		if len(args) == 4 {
			d.lo, d.hi = args[2], args[3]
		}
	case kindLognormal:
		d.a, d.b = args[0], args[1]
		if d.a <= 0 {
			return fmt.Errorf("MEAN must be > 0, got %g", d.a)
		}
		if len(args) == 3 {
			d.hi = args[2]
		}
		// Values with mean m and variance s² have log-variance
		// σ² = ln(1 + s²/m²) and log-mean μ = ln m − σ²/2.
		s2 := math.Log1p((d.b / d.a) * (d.b / d.a))
		d.sigma, d.mu = math.Sqrt(s2), math.Log(d.a)-s2/2
	case kindPareto:
		d.a, d.b = args[0], args[1]
		if d.a <= 0 {
			return fmt.Errorf("MIN must be > 0, got %g", d.a)
		}
		if len(args) == 3 {
			d.hi = args[2]
		}
		d.lo = d.a
	}
	if d.lo > d.hi {
		return fmt.Errorf("MIN must be ≤ MAX, got MIN=%g, MAX=%g", d.lo, d.hi)
	}
	return nil
}

// IsZero reports whether d is "none".
func (d Dist) IsZero() bool { return d.kind == kindNone }

// Kind returns the distribution's kind name.
func (d Dist) Kind() string {
	for name, f := range distForms {
		if f.kind == d.kind {
			return name
		}
	}
	return DistNone
}

// String returns the canonical spec: ParseDist(d.String()) == d.
func (d Dist) String() string {
	if d.kind == kindNone {
		return DistNone
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var args []float64
	switch d.kind {
	case kindFixed, kindExp:
		args = []float64{d.a}
	case kindUniform:
		args = []float64{d.lo, d.hi}
	case kindNormal:
		args = []float64{d.a, d.b, d.lo, d.hi}
	case kindLognormal, kindPareto:
		args = []float64{d.a, d.b, d.hi}
	}
	args = args[:d.n]
	parts := make([]string, len(args))
	for i, v := range args {
		parts[i] = g(v)
	}
	return d.Kind() + ":" + strings.Join(parts, ",")
}

// MarshalText returns the canonical spec.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a spec with ParseDist.
func (d *Dist) UnmarshalText(b []byte) error {
	v, err := ParseDist(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Mean is the distribution's mean in ms before clipping (+Inf for a Pareto
// with ALPHA ≤ 1 and no MAX); clipped kinds' means are approximate.
func (d Dist) Mean() float64 {
	switch d.kind {
	case kindFixed, kindExp, kindNormal, kindLognormal:
		return d.a
	case kindUniform:
		return (d.lo + d.hi) / 2
	case kindPareto:
		if d.b <= 1 {
			return math.Inf(1)
		}
		return d.b * d.a / (d.b - 1)
	}
	return 0
}

// sampleMS draws one value in milliseconds.
func (d *Dist) sampleMS(r *seed.Rand) float64 {
	var v float64
	switch d.kind {
	case kindNone:
		return 0
	case kindFixed:
		return d.a
	case kindUniform:
		v = d.lo + (d.hi-d.lo)*r.Float64()
	case kindExp:
		v = d.a * r.ExpFloat64()
	case kindNormal:
		v = d.a + d.b*r.NormFloat64()
	case kindLognormal:
		v = math.Exp(d.mu + d.sigma*r.NormFloat64())
	case kindPareto:
		v = d.a * math.Exp(r.ExpFloat64()/d.b) // U^(−1/α) = e^(E/α) with E = −ln U exponential: no Pow
	}
	return min(max(v, d.lo), d.hi)
}

// sample draws one value in integer nanoseconds (draws are ≥ 0, so adding
// a half and truncating rounds them).
func (d *Dist) sample(r *seed.Rand) int64 {
	if d.kind == kindNone {
		return 0
	}
	return int64(d.sampleMS(r)*1e6 + 0.5)
}

// SampleNS draws one value from r, in integer nanoseconds.
func (d *Dist) SampleNS(r *seed.Rand) int64 { return d.sample(r) }

// msToNS converts milliseconds to integer nanoseconds, rounding.
func msToNS(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
