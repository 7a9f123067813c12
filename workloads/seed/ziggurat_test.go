package seed

import (
	"math"
	"slices"
	"testing"
)

// ksDistance is the Kolmogorov–Smirnov statistic of sorted draws against cdf.
func ksDistance(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	var d float64
	for i, x := range sorted {
		c := cdf(x)
		d = max(d, math.Abs(c-float64(i)/n), math.Abs(float64(i+1)/n-c))
	}
	return d
}

// The ziggurat samplers draw from the standard normal and the unit
// exponential: a million draws pass the Kolmogorov–Smirnov test at the
// 0.1 % level (critical distance 1.95/√n), and the tails beyond the base
// layer's edge R — drawn by a separate method — hold their expected share
// within 5 standard deviations. A wrong table, a biased layer choice or a
// dropped tail fails one of these.
func TestZigguratDistributions(t *testing.T) {
	const n = 1_000_000
	for _, c := range []struct {
		name  string
		draw  func(*Rand) float64
		cdf   func(float64) float64
		edge  float64 // R: draws beyond it come from the tail method
		tail  float64 // P(|X| > R)
		mean  float64
		sd    float64
		lower float64 // the support's lower end
	}{
		{"normal", (*Rand).NormFloat64, func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) },
			zigNormalR, math.Erfc(zigNormalR / math.Sqrt2), 0, 1, math.Inf(-1)},
		{"exp", (*Rand).ExpFloat64, func(x float64) float64 { return -math.Expm1(-x) },
			zigExpR, math.Exp(-zigExpR), 1, 1, 0},
	} {
		r := Stream(42, "test")
		xs := make([]float64, n)
		var sum, beyond float64
		for i := range xs {
			x := c.draw(&r)
			if x < c.lower || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%s drew %g", c.name, x)
			}
			xs[i] = x
			sum += x
			if math.Abs(x) > c.edge {
				beyond++
			}
		}
		if m := sum / n; math.Abs(m-c.mean) > 5*c.sd/math.Sqrt(n) {
			t.Errorf("%s: mean %.5f, want %g ± %.5f", c.name, m, c.mean, 5*c.sd/math.Sqrt(n))
		}
		want := c.tail * n
		if math.Abs(beyond-want) > 5*math.Sqrt(want) {
			t.Errorf("%s: %.0f draws beyond R = %.3f, want %.1f ± %.1f", c.name, beyond, c.edge, want, 5*math.Sqrt(want))
		}
		slices.Sort(xs)
		if d, crit := ksDistance(xs, c.cdf), 1.95/math.Sqrt(n); d > crit {
			t.Errorf("%s: Kolmogorov–Smirnov distance %.5f > %.5f", c.name, d, crit)
		} else {
			t.Logf("%s: KS distance %.5f (critical %.5f), %.0f beyond R (expected %.1f)", c.name, d, crit, beyond, want)
		}
	}
}

// The layer tables close: the top layer ends at the density's peak, so
// every layer has the same area (a wrong R or v for the layer count leaves
// the last layer too big or too small).
func TestZigguratTablesClose(t *testing.T) {
	for name, z := range map[string]*ziggurat{"normal": zigNormal, "exp": zigExp} {
		// The top layer spans f(x[n−1]) to 1 with width x[n−1]: its area
		// must be v like the others'.
		top := z.w[zigLayers-1] * (1 << 53) * (1 - z.f[zigLayers-1])
		v := map[string]float64{"normal": zigNormalV, "exp": zigExpV}[name]
		if math.Abs(top-v) > 1e-6*v {
			t.Errorf("%s: top layer area %.12g, want v = %.12g", name, top, v)
		}
	}
}

func BenchmarkNormal(b *testing.B) {
	r := Stream(1, "bench")
	var s float64
	for b.Loop() {
		s += r.NormFloat64()
	}
	_ = s
}

func BenchmarkExp(b *testing.B) {
	r := Stream(1, "bench")
	var s float64
	for b.Loop() {
		s += r.ExpFloat64()
	}
	_ = s
}
