package delivery

import (
	"math"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

// FuzzParseDist: any spec either fails with an error or parses to a Dist
// that round-trips through its canonical spec and draws within [0, MaxMS].
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"", "none", "7", "fixed:7", "uniform:1,2", "exp:3", "normal:1,2,0,5", "lognormal:5,9,100",
		"pareto:1,1.2,2000", "pareto:1,1e-300", "exp:1e-320", "uniform:0,1e7", "normal:1e7,1e7", ":", "exp:,", "fixed:0x10", "fixed:Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := ParseDist(spec)
		if err != nil {
			return
		}
		again, err := ParseDist(d.String())
		if err != nil || again != d {
			t.Fatalf("%q → %q does not round-trip: %v", spec, d.String(), err)
		}
		r := seed.Stream(uint64(len(spec)), "fuzz")
		for range 100 {
			v := d.sampleMS(&r)
			if !(v >= 0 && v <= MaxMS) || math.IsNaN(v) {
				t.Fatalf("%q drew %g", spec, v)
			}
		}
	})
}
