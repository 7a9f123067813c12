package delivery

import (
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

func TestParseDist(t *testing.T) {
	for _, c := range []struct{ spec, canon, err string }{
		{"", "none", ""},
		{"none", "none", ""},
		{"150", "fixed:150", ""},
		{"fixed:0", "fixed:0", ""},
		{"uniform:10,20", "uniform:10,20", ""},
		{" exp : 5 ", "exp:5", ""},
		{"exp:5", "exp:5", ""},
		{"normal:100,30", "normal:100,30", ""},
		{"normal:100,30,50,150", "normal:100,30,50,150", ""},
		{"normal:100,30,50", "", "MEAN,SD or MEAN,SD,MIN,MAX"},
		{"lognormal:500,300", "lognormal:500,300", ""},
		{"lognormal:500,300,2000", "lognormal:500,300,2000", ""},
		{"pareto:1,1.5", "pareto:1,1.5", ""},
		{"pareto:1,1.5,900", "pareto:1,1.5,900", ""},
		{"pareto:0,1.5", "", "MIN must be > 0"},
		{"pareto:1,0", "", "ALPHA must be in (0, 100]"},
		{"uniform:20,10", "", "MIN must be ≤ MAX"},
		{"exp:0", "", "MEAN must be > 0"},
		{"exp:-1", "", "must be a number in [0, 1e+07]"},
		{"exp:NaN", "", "must be a number"},
		{"fixed:1e8", "", "must be a number"},
		{"-5", "", "must be a number"},
		{"exp", "", "expected KIND:PARAMS"},
		{"exp:", "", "expected MEAN"},
		{"exp:1,2", "", "expected MEAN"},
		{"none:3", "", "takes no parameters"},
		{"gamma:1,2", "", "unknown distribution kind \"gamma\""},
	} {
		d, err := ParseDist(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseDist(%q) error %v, want one containing %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDist(%q): %v", c.spec, err)
			continue
		}
		if got := d.String(); got != c.canon {
			t.Errorf("ParseDist(%q).String() = %q, want %q", c.spec, got, c.canon)
		}
		if again, err := ParseDist(d.String()); err != nil || again != d {
			t.Errorf("%q does not round-trip: %v %v", c.spec, again, err)
		}
	}
}

// Draws stay within bounds and have the documented means.
func TestDistSamples(t *testing.T) {
	for _, c := range []struct {
		spec     string
		mean, lo float64
		hi       float64
	}{
		{"fixed:7", 7, 7, 7},
		{"uniform:10,20", 15, 10, 20},
		{"exp:5", 5, 0, MaxMS},
		{"normal:100,10", 100, 0, MaxMS},
		{"lognormal:50,40", 50, 0, MaxMS},
		{"pareto:2,3", 3, 2, MaxMS},
		{"pareto:1,1.1,50", math.NaN(), 1, 50},
	} {
		d := MustParseDist(c.spec)
		r := seed.Stream(1, "test")
		const n = 200_000
		var sum float64
		for range n {
			v := d.sampleMS(&r)
			if v < c.lo || v > c.hi {
				t.Fatalf("%s drew %g outside [%g, %g]", c.spec, v, c.lo, c.hi)
			}
			sum += v
		}
		if !math.IsNaN(c.mean) && math.Abs(sum/n-c.mean) > 0.02*c.mean {
			t.Errorf("%s: mean of draws %.3f, want %.3f ± 2 %%", c.spec, sum/n, c.mean)
		}
	}
}
