package seed

import "math"

// Ziggurat samplers for the standard normal and the unit exponential
// (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
// Variables", Journal of Statistical Software 5(8), 2000). They are exact:
// every draw comes from the target distribution, not an approximation of
// it. One 64-bit draw picks a layer and a point in it; the point is
// accepted at once in about 99 % of draws, with no logarithm and no
// rejection loop, which makes them several times faster than the polar
// method (a logarithm and a square root per pair, a 21 % rejection and a
// branch on the kept spare), as the delivery path's per-packet jitter needs.
//
// A ziggurat covers the density f (decreasing on [0, ∞)) with n layers of
// equal area v: layer 0 is the base, a rectangle of width R under f(R)
// plus the tail beyond R; layer i ≥ 1 is a rectangle from height
// f(x[i]) to f(x[i+1]) of width x[i], where x[1] = R and
// f(x[i+1]) = f(x[i]) + v/x[i], up to x[n] = 0. A uniform point of a
// uniform layer, x = u·x[i], is accepted at once when x < x[i+1] (it lies
// under f whatever its height); otherwise the base samples the tail and a
// higher layer tests the point's height against f.
type ziggurat struct {
	// k[i] = ⌊2^53 · x[i+1]/x[i]⌋: a 53-bit uniform j is accepted at once
	// in layer i when j < k[i].
	k [zigLayers]uint64
	// w[i] = x[i]/2^53 turns j into a point of layer i; x[0] = v/f(R) is the
	// base's pseudo-width, so that it too has area v.
	w [zigLayers]float64
	// f[i] = f(x[i]) for i ≥ 1, and f[zigLayers] = f(0) = 1.
	f [zigLayers + 1]float64
}

// zigLayers is the number of layers, a power of two: the low bits of a
// draw pick one.
const (
	zigBits   = 8
	zigLayers = 1 << zigBits
)

// The layer edges R and the common area v for 256 layers, from Marsaglia
// and Tsang's paper (the normal's figures are for the half density
// exp(−x²/2), unnormalized).
const (
	zigNormalR = 3.6541528853610088
	zigNormalV = 0.00492867323399
	zigExpR    = 7.69711747013104972
	zigExpV    = 0.0039496598225815571993
)

func newZiggurat(r, v float64, f, finv func(float64) float64) *ziggurat {
	var z ziggurat
	var x [zigLayers + 1]float64
	x[0], x[1] = v/f(r), r
	for i := 1; i < zigLayers-1; i++ {
		x[i+1] = finv(f(x[i]) + v/x[i])
	}
	x[zigLayers] = 0
	for i := range zigLayers {
		z.k[i] = uint64(x[i+1] / x[i] * (1 << 53))
		z.w[i] = x[i] / (1 << 53)
	}
	for i := 1; i <= zigLayers; i++ {
		z.f[i] = f(x[i])
	}
	return &z
}

// zigNormal and zigExp are built once, when the package loads, from the
// constants above, and only read afterwards.
var (
	zigNormal = newZiggurat(zigNormalR, zigNormalV,
		func(x float64) float64 { return math.Exp(-x * x / 2) },
		func(y float64) float64 { return math.Sqrt(-2 * math.Log(y)) })
	zigExp = newZiggurat(zigExpR, zigExpV,
		func(x float64) float64 { return math.Exp(-x) },
		func(y float64) float64 { return -math.Log(y) })
)

// NormFloat64 returns a standard normal draw.
func (r *Rand) NormFloat64() float64 {
	z := zigNormal
	for {
		u := r.Uint64()
		i := u & (zigLayers - 1)
		j := u >> 11 // 53 bits; bit zigBits of u (below them) is the sign
		x := float64(j) * z.w[i]
		if j >= z.k[i] {
			var ok bool
			if x, ok = r.normalSlow(z, i, x); !ok {
				continue
			}
		}
		// Bit zigBits of u becomes the sign bit: a branch on it would be
		// mispredicted every other draw.
		return math.Float64frombits(math.Float64bits(x) ^ (u&zigLayers)<<(63-zigBits))
	}
}

// normalSlow handles a point outside layer i's inner rectangle: a draw
// from the tail beyond R for the base (Marsaglia's method), or the test of
// a uniform height against the density for the others.
func (r *Rand) normalSlow(z *ziggurat, i uint64, x float64) (float64, bool) {
	if i == 0 {
		for {
			a := -math.Log(r.Open()) / zigNormalR
			b := -math.Log(r.Open())
			if 2*b >= a*a {
				return zigNormalR + a, true
			}
		}
	}
	y := z.f[i] + r.Float64()*(z.f[i+1]-z.f[i])
	return x, y < math.Exp(-x*x/2)
}

// ExpFloat64 returns a draw of the unit exponential distribution.
func (r *Rand) ExpFloat64() float64 {
	z := zigExp
	var base float64 // the tail is the distribution again, shifted by R
	for {
		u := r.Uint64()
		i := u & (zigLayers - 1)
		j := u >> 11
		x := float64(j) * z.w[i]
		if j < z.k[i] {
			return base + x
		}
		if i == 0 {
			base += zigExpR
			continue
		}
		if z.f[i]+r.Float64()*(z.f[i+1]-z.f[i]) < math.Exp(-x) {
			return base + x
		}
	}
}
