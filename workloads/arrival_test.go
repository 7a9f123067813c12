package workloads

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

// gapStats returns the mean (s) and coefficient of variation of the
// inter-arrival gaps of reqs.
func gapStats(reqs []Request) (mean, cv float64) {
	var sum, sumSq float64
	for i := 1; i < len(reqs); i++ {
		g := float64(reqs[i].Arrival-reqs[i-1].Arrival) / 1e9
		sum += g
		sumSq += g * g
	}
	n := float64(len(reqs) - 1)
	mean = sum / n
	return mean, math.Sqrt(sumSq/n-mean*mean) / mean
}

// TestShapedArrivals checks that gamma and Weibull arrivals have the mean
// rate and the coefficient of variation they are given, whether by cv or
// by shape.
func TestShapedArrivals(t *testing.T) {
	tests := []struct {
		arrival   string
		cv, shape float64
		wantCV    float64
	}{
		{ArrivalGamma, 0.5, 0, 0.5},
		{ArrivalGamma, 1, 0, 1},
		{ArrivalGamma, 2, 0, 2},
		{ArrivalGamma, 4, 0, 4},
		{ArrivalGamma, 0, 0.25, 2}, // k = 1/4: cv = 1/√k
		{ArrivalWeibull, 0.5, 0, 0.5},
		{ArrivalWeibull, 1, 0, 1},
		{ArrivalWeibull, 2, 0, 2},
		{ArrivalWeibull, 3, 0, 3},
		{ArrivalWeibull, 0, 1, 1},
		{ArrivalWeibull, 0, 0.5, math.Sqrt(5)}, // Γ(5)/Γ(3)² − 1 = 5
	}
	const rate, n = 20.0, 400_001
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/cv=%g/shape=%g", tt.arrival, tt.cv, tt.shape), func(t *testing.T) {
			c := DefaultConfig()
			c.Arrival, c.CV, c.Shape, c.Rate, c.Requests = tt.arrival, tt.cv, tt.shape, rate, n
			reqs := Collect(mustNew(t, c, 11), 0)
			mean, cv := gapStats(reqs)
			// The standard error of the mean gap is cv/√n of it: under 1 %
			// here; heavy tails make the sample CV converge slowly, so its
			// bound grows with the CV.
			if want := 1 / rate; math.Abs(mean-want)/want > 0.02 {
				t.Errorf("mean gap %.5f s, want %.5f s ± 2%%", mean, want)
			}
			if tol := 0.02 + 0.02*tt.wantCV; math.Abs(cv-tt.wantCV)/tt.wantCV > tol {
				t.Errorf("gap CV %.3f, want %.3f ± %.0f%%", cv, tt.wantCV, 100*tol)
			}
		})
	}
}

func TestWeibullShapeForCV(t *testing.T) {
	for _, c := range []float64{0.2, 0.5, 1, 2, 5, 50} {
		cv := weibullCV(c)
		if got := weibullShapeForCV(cv); math.Abs(got-c)/c > 1e-6 {
			t.Errorf("weibullShapeForCV(weibullCV(%g) = %g) = %g", c, cv, got)
		}
	}
	if cv := weibullCV(1); math.Abs(cv-1) > 1e-9 {
		t.Errorf("weibullCV(1) = %g, want 1 (exponential)", cv)
	}
}

func TestArrivalValidation(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		want   string
	}{
		{"gamma without cv", func(c *Config) { c.Arrival = ArrivalGamma }, "workload.cv: gamma arrivals need cv"},
		{"both", func(c *Config) { c.Arrival, c.CV, c.Shape = ArrivalWeibull, 2, 0.5 }, "set cv or shape for weibull arrivals, not both"},
		{"cv on poisson", func(c *Config) { c.CV = 2 }, "cv and shape apply to gamma and weibull arrivals, not poisson"},
		{"cv too large", func(c *Config) { c.Arrival, c.CV = ArrivalGamma, 50 }, "workload.cv: must be in [0.02, 10], got 50"},
		{"negative cv", func(c *Config) { c.Arrival, c.CV = ArrivalGamma, -1 }, "workload.cv: must be a finite number ≥ 0, got -1"},
		{"NaN shape", func(c *Config) { c.Arrival, c.Shape = ArrivalGamma, math.NaN() }, "workload.shape: must be a finite number"},
		{"tiny gamma shape", func(c *Config) { c.Arrival, c.Shape = ArrivalGamma, 0.001 }, "workload.shape: gamma shape 0.001 is outside [0.01, 10000]"},
		{"tiny weibull shape", func(c *Config) { c.Arrival, c.Shape = ArrivalWeibull, 0.01 }, "workload.shape: weibull shape 0.01 is outside [0.1, 100]"},
		{"bad curve", func(c *Config) { c.RateCurve = "square:1" }, `workload.rate_curve: expected KIND:PARAMS with KIND one of cycle, onoff, points, sine`},
		{"sine amplitude", func(c *Config) { c.RateCurve = "sine:60,2" }, "workload.rate_curve: sine: AMPLITUDE must be a number in [0, 1], got \"2\""},
		{"onoff arity", func(c *Config) { c.RateCurve = "onoff:5" }, "onoff: expected 2 parameters, got 1 (form onoff:ON_S,OFF_S)"},
		{"points first", func(c *Config) { c.RateCurve = "points:5=1,10=2" }, "point 1: the first point must be at T=0"},
		{"points order", func(c *Config) { c.RateCurve = "points:0=1,10=2,10=3" }, "point 3: times must increase"},
		{"points zero", func(c *Config) { c.RateCurve = "points:0=0,10=0" }, "every multiplier is 0"},
		{"points form", func(c *Config) { c.RateCurve = "points:0:1" }, "point 1: expected T=M"},
		{"cycle one point", func(c *Config) { c.RateCurve = "cycle:0=1" }, "needs at least two points"},
		{"negative multiplier", func(c *Config) { c.RateCurve = "cycle:0=1,10=-1" }, "point 2: M must be a multiplier"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.modify(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	for _, ok := range []func(c *Config){
		func(c *Config) { c.Arrival, c.CV = ArrivalGamma, 3 },
		func(c *Config) { c.Arrival, c.Shape = ArrivalWeibull, 0.7 },
		func(c *Config) { c.RateCurve = "onoff:5,15" },
		func(c *Config) { c.Arrival, c.CV, c.RateCurve = ArrivalGamma, 2, "sine:86400,0.6,21600" },
		func(c *Config) { c.RateCurve = "points:0=0.5, 3600=2, 7200=1" },
		func(c *Config) { c.RateCurve = "cycle:0=0.2,43200=1.8,86400=0.2" },
	} {
		c := DefaultConfig()
		ok(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v", c, err)
		}
	}
}

// countIn counts the arrivals in [from, to) seconds.
func countIn(reqs []Request, from, to float64) int {
	n := 0
	for _, r := range reqs {
		if s := float64(r.Arrival) / 1e9; s >= from && s < to {
			n++
		}
	}
	return n
}

// TestRateCurves checks that each curve shapes the rate as documented:
// counts over intervals match Rate × ∫ m within a few standard deviations.
func TestRateCurves(t *testing.T) {
	const rate = 50.0
	gen := func(t *testing.T, curve, arrival string, cv float64) []Request {
		c := DefaultConfig()
		c.Rate, c.Requests, c.DurationS, c.RateCurve, c.Arrival, c.CV = rate, 0, 2000, curve, arrival, cv
		return Collect(mustNew(t, c, 5), 0)
	}
	near := func(t *testing.T, what string, got int, want float64) {
		t.Helper()
		// Poisson counts: sd √want; allow 4 sd plus 1 %.
		if math.Abs(float64(got)-want) > 4*math.Sqrt(want)+0.01*want {
			t.Errorf("%s: %d arrivals, want about %.0f", what, got, want)
		}
	}
	t.Run("onoff", func(t *testing.T) {
		reqs := gen(t, "onoff:5,15", ArrivalPoisson, 0)
		near(t, "whole run", len(reqs), rate*2000)
		for _, r := range reqs {
			if s := math.Mod(float64(r.Arrival)/1e9, 20); s >= 5+1e-9 {
				t.Fatalf("arrival at %.6f s falls in an off period (%.3f s into its 20 s cycle)", float64(r.Arrival)/1e9, s)
			}
		}
		near(t, "first on period", countIn(reqs, 0, 5), rate*20)
	})
	t.Run("sine", func(t *testing.T) {
		reqs := gen(t, "sine:100,0.5", ArrivalPoisson, 0)
		near(t, "whole run", len(reqs), rate*2000)
		// Over 20 periods, each quarter of the cycle holds
		// rate·(25 ± 0.5·100/2π·(…)) per period.
		for q := range 4 {
			a, b := float64(q)*25, float64(q+1)*25
			w := 2 * math.Pi / 100
			integral := (b - a) - 0.5/w*(math.Cos(w*b)-math.Cos(w*a))
			got := 0
			for p := range 20 {
				got += countIn(reqs, float64(p)*100+a, float64(p)*100+b)
			}
			near(t, fmt.Sprintf("quarter %d", q), got, rate*20*integral)
		}
	})
	t.Run("points", func(t *testing.T) {
		reqs := gen(t, "points:0=1,100=3", ArrivalPoisson, 0)
		near(t, "ramp", countIn(reqs, 0, 100), rate*200) // mean multiplier 2
		near(t, "held", countIn(reqs, 100, 2000), rate*3*1900)
		near(t, "first half of the ramp", countIn(reqs, 0, 50), rate*75) // ∫₀⁵⁰ 1 + t/50
	})
	t.Run("cycle", func(t *testing.T) {
		reqs := gen(t, "cycle:0=0,50=2,100=0", ArrivalPoisson, 0)
		near(t, "whole run", len(reqs), rate*2000)
		near(t, "rising halves", countIn(reqs, 1000, 1050), rate*50)
		near(t, "first 10 s of a cycle", countIn(reqs, 1000, 1010)+countIn(reqs, 1100, 1110), 2*rate*2) // ∫₀¹⁰ t/25
	})
	t.Run("gamma under a curve", func(t *testing.T) {
		reqs := gen(t, "onoff:10,10", ArrivalGamma, 2)
		// Counts of a bursty process vary more than Poisson: allow more.
		if got, want := float64(len(reqs)), rate*2000; math.Abs(got-want) > 0.05*want {
			t.Errorf("%0.f arrivals, want %0.f ± 5%%", got, want)
		}
		if n := countIn(reqs, 10, 20) + countIn(reqs, 30, 40); n != 0 {
			t.Errorf("%d arrivals in off periods", n)
		}
	})
	t.Run("curve that stops", func(t *testing.T) {
		c := DefaultConfig()
		c.Rate, c.Requests, c.RateCurve = rate, 100_000, "points:0=1,10=0"
		reqs := Collect(mustNew(t, c, 5), 0)
		near(t, "before the rate reaches 0", len(reqs), rate*5)
		if last := reqs[len(reqs)-1].Arrival; last > 10e9 {
			t.Errorf("last arrival at %d ns, after the rate fell to 0 at 10 s", last)
		}
	})
}

// TestCurveInverseMonotone feeds each curve increasing operational times;
// the real times must not decrease and must invert the integral.
func TestCurveInverseMonotone(t *testing.T) {
	for _, spec := range []string{"onoff:1,3", "sine:10,1", "sine:10,0.3,2.5", "points:0=0,5=2,6=0,7=0,9=1",
		"cycle:0=0,1=4,2=0,3=0,4=1", "points:0=3"} {
		c, err := parseCurve(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		r := seed.Stream(1, "test", 1)
		prev, u := 0.0, 0.0
		for range 20000 {
			u += r.ExpFloat64() * 1e7
			got := c.inverse(u)
			if got < prev {
				t.Fatalf("%s: inverse(%g) = %g < inverse of a smaller u = %g", spec, u, got, prev)
			}
			prev = got
		}
	}
	// Points: ∫₀ᵗ m at the inverse is u.
	p, _ := parseCurve("points:0=0.5,10=2.5,20=1")
	pc := p.(*points)
	integral := func(t float64) float64 {
		for j := len(pc.t) - 1; j >= 0; j-- {
			if t >= pc.t[j] {
				if j == len(pc.t)-1 {
					return pc.cum[j] + (t-pc.t[j])*pc.m[j]
				}
				tau := t - pc.t[j]
				g := (pc.m[j+1] - pc.m[j]) / (pc.t[j+1] - pc.t[j])
				return pc.cum[j] + pc.m[j]*tau + g*tau*tau/2
			}
		}
		return 0
	}
	for _, u := range []float64{0, 1e9, 4.9e9, 5e9, 17e9, 29.9e9, 30e9, 100e9} {
		if got := integral(p.inverse(u)); math.Abs(got-u) > 1 {
			t.Errorf("points: ∫ m up to inverse(%g) = %g", u, got)
		}
	}
}

func FuzzParseCurve(f *testing.F) {
	for _, s := range []string{"onoff:5,15", "sine:86400,0.5", "sine:60,1,30", "points:0=1,10=2", "cycle:0=0,5=1,10=0",
		"", "onoff:", "sine:0,0", "points:0=1,0=2", "cycle:0=1e6,1e8=1e6", "points:0=.5e1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := parseCurve(spec)
		if err != nil || c == nil {
			return
		}
		prev := 0.0
		for _, u := range []float64{0, 1, 1e6, 1e9, 3.3e10, 1e12, 1e15} {
			got := c.inverse(u)
			if math.IsNaN(got) || got < prev {
				t.Fatalf("%q: inverse(%g) = %g after %g", spec, u, got, prev)
			}
			prev = got
		}
	})
}
