package workloads

import (
	"fmt"
	"math"
	"slices"

	"github.com/itlsim/itlsim/workloads/seed"
)

// Names of the arrival processes, the values of Config.Arrival.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
	ArrivalGamma    = "gamma"
	ArrivalWeibull  = "weibull"
)

// Bounds on the burstiness parameters. Beyond them the gap distributions
// degenerate numerically (a gamma of shape 10⁻⁴ draws gaps that underflow
// to 0), and no published trace comes near: ServeGen's production windows
// have CVs up to about 9, Azure's traces about 2-3.
const (
	minCV, maxCV                 = 0.02, 10
	minGammaShape, maxGammaShape = 0.01, 1e4
	minWeibShape, maxWeibShape   = 0.1, 100
)

// arrivalProcess places request i on the clock. at is called for
// i = 0, 1, 2, ... in order and returns non-decreasing times in ns
// (operational time when a rate curve modulates the process).
type arrivalProcess interface {
	at(i int, r *seed.Rand) float64
}

// arrivalSpec says what a process needs and builds it.
type arrivalSpec struct {
	describe string
	// shaped processes take Config.CV or Config.Shape; others take neither.
	shaped bool
	// build returns the process for a mean gap of gapNs.
	build func(gapNs float64, c Config) (arrivalProcess, error)
}

// arrivalProcesses is the registry of arrival processes; ArrivalNames,
// DescribeArrival and Validate derive from it.
func arrivalProcesses() map[string]arrivalSpec {
	return map[string]arrivalSpec{
		ArrivalPoisson: {describe: "independent exponential gaps (CV 1), the default",
			build: func(gapNs float64, _ Config) (arrivalProcess, error) {
				return &renewal{gapNs: gapNs, gaps: exponentialGaps{}}, nil
			}},
		ArrivalConstant: {describe: "evenly spaced (CV 0)",
			build: func(gapNs float64, _ Config) (arrivalProcess, error) { return constant{gapNs: gapNs}, nil }},
		ArrivalGamma: {describe: "gamma gaps: set cv (burstiness; 1 is Poisson) or shape k (cv = 1/√k)", shaped: true,
			build: func(gapNs float64, c Config) (arrivalProcess, error) {
				g, err := newGammaGaps(c.CV, c.Shape)
				return &renewal{gapNs: gapNs, gaps: g}, err
			}},
		ArrivalClosed: {describe: "closed loop: users concurrent users, each sending its next request think_s (mean, exponential) after its last one ended",
			build: func(float64, Config) (arrivalProcess, error) { return constant{}, nil }},
		ArrivalWeibull: {describe: "Weibull gaps: set cv or shape c (c < 1 is bursty, 1 is Poisson)", shaped: true,
			build: func(gapNs float64, c Config) (arrivalProcess, error) {
				g, err := newWeibullGaps(c.CV, c.Shape)
				return &renewal{gapNs: gapNs, gaps: g}, err
			}},
	}
}

// ArrivalNames returns the valid values of Config.Arrival, sorted.
func ArrivalNames() []string {
	names := make([]string, 0, 4)
	for name := range arrivalProcesses() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// DescribeArrival returns a one-line description of an arrival process.
func DescribeArrival(name string) (string, bool) {
	s, ok := arrivalProcesses()[name]
	return s.describe, ok
}

// gapSampler draws inter-arrival gaps of mean 1.
type gapSampler interface {
	gap(r *seed.Rand) float64
}

// renewal is a renewal process: independent gaps of mean gapNs. The first
// request arrives at 0; the clock is kept in float64 ns so the rounding of
// each arrival to an integer never accumulates.
type renewal struct {
	gapNs float64
	gaps  gapSampler
	t     float64
}

func (p *renewal) at(i int, r *seed.Rand) float64 {
	if i > 0 {
		p.t += p.gaps.gap(r) * p.gapNs
	}
	return p.t
}

// constant spaces requests exactly gapNs apart, starting at 0. It draws
// nothing.
type constant struct {
	gapNs float64
}

func (c constant) at(i int, _ *seed.Rand) float64 { return float64(i) * c.gapNs }

// exponentialGaps are the gaps of a Poisson process: one draw each.
type exponentialGaps struct{}

func (exponentialGaps) gap(r *seed.Rand) float64 { return r.ExpFloat64() }

// gammaGaps are gamma-distributed with shape k and scale 1/k (mean 1,
// CV 1/√k).
type gammaGaps struct{ k float64 }

func newGammaGaps(cv, shape float64) (gammaGaps, error) {
	k := shape
	if cv > 0 {
		k = 1 / (cv * cv)
	}
	if !(k >= minGammaShape && k <= maxGammaShape) {
		return gammaGaps{}, fmt.Errorf("gamma shape %g is outside [%g, %g]", k, minGammaShape, float64(maxGammaShape))
	}
	return gammaGaps{k: k}, nil
}

func (g gammaGaps) gap(r *seed.Rand) float64 { return r.Gamma(g.k) / g.k }

// weibullGaps are Weibull-distributed with shape c and the scale that
// makes the mean 1: 1/Γ(1+1/c).
type weibullGaps struct{ c, scale float64 }

func newWeibullGaps(cv, shape float64) (weibullGaps, error) {
	c := shape
	if cv > 0 {
		c = weibullShapeForCV(cv)
	}
	if !(c >= minWeibShape && c <= maxWeibShape) {
		return weibullGaps{}, fmt.Errorf("weibull shape %g is outside [%g, %g]", c, minWeibShape, float64(maxWeibShape))
	}
	lg, _ := math.Lgamma(1 + 1/c)
	return weibullGaps{c: c, scale: math.Exp(-lg)}, nil
}

func (w weibullGaps) gap(r *seed.Rand) float64 {
	return w.scale * math.Pow(r.ExpFloat64(), 1/w.c)
}

// weibullCV is the coefficient of variation of a Weibull of shape c:
// √(Γ(1+2/c)/Γ(1+1/c)² − 1).
func weibullCV(c float64) float64 {
	l2, _ := math.Lgamma(1 + 2/c)
	l1, _ := math.Lgamma(1 + 1/c)
	return math.Sqrt(math.Expm1(l2 - 2*l1))
}

// weibullShapeForCV inverts weibullCV, which decreases in c, by bisection
// on log c over the allowed shapes; a CV outside their range gives a
// bound, which the caller's range check then rejects.
func weibullShapeForCV(cv float64) float64 {
	lo, hi := math.Log(minWeibShape/2), math.Log(maxWeibShape*2)
	for range 200 {
		mid := (lo + hi) / 2
		if weibullCV(math.Exp(mid)) > cv {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}
