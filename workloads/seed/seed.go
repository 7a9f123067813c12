package seed

import (
	"math"
	"math/bits"
)

// Derive returns the seed of the child named name under the seed parent.
// parts, if any, extend the name with numbers, each after a slash:
// Derive(p, "replica", 3) is the child "replica/3", exactly
// Derive(p, "replica/3"). The seed is Mix(parent ^ Mix(Hash(full name))):
// a SplitMix64 mix of the parent and the FNV-1a hash of the name, so
// sibling names give unrelated seeds and the same parent and name always
// give the same one. A child seed is a parent in turn (see the package
// documentation for how names compose). Derive does not allocate.
func Derive(parent uint64, name string, parts ...int) uint64 {
	h := hashString(fnvOffset, name)
	for _, p := range parts {
		h = hashByte(h, '/')
		var buf [20]byte
		u := uint64(p)
		if p < 0 {
			h = hashByte(h, '-')
			u = uint64(-p)
		}
		// The decimal digits, most significant first.
		i := len(buf)
		for {
			i--
			buf[i] = byte('0' + u%10)
			u /= 10
			if u == 0 {
				break
			}
		}
		for _, c := range buf[i:] {
			h = hashByte(h, c)
		}
	}
	return Mix(parent ^ Mix(h))
}

// Stream returns the random stream whose seed is Derive(parent, name,
// parts...): the one way every part of itlsim gets its random numbers.
func Stream(parent uint64, name string, parts ...int) Rand {
	return Rand{s: Derive(parent, name, parts...)}
}

// Mix is SplitMix64's output function (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014): a bijection of
// uint64 whose output bits each depend on every input bit.
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hash is the 64-bit FNV-1a hash of name: how a stream's name becomes
// part of its seed.
func Hash(name string) uint64 { return hashString(fnvOffset, name) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = hashByte(h, s[i])
	}
	return h
}

func hashByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// Rand is a SplitMix64 random stream: one uint64 of state, no allocation,
// and well-mixed output even for adjacent seeds. Its methods mirror
// math/rand/v2's names for the draws itlsim makes. The zero value is a
// valid stream; Stream gives a named one.
type Rand struct{ s uint64 }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a number uniform in [0,1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) * (1.0 / (1 << 53)) }

// Open returns a number uniform in (0,1].
func (r *Rand) Open() float64 { return 1 - r.Float64() }

// Uint64N returns an integer uniform in [0,n) (n > 0), without bias:
// Lemire's multiply-and-reject ("Fast random integer generation in an
// interval", ACM TOMACS 2019), which rejects a draw with probability below
// n/2^64.
func (r *Rand) Uint64N(n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// IntN returns an integer uniform in [0,n); it panics if n ≤ 0.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("seed: IntN of a non-positive n")
	}
	return int(r.Uint64N(uint64(n)))
}

// Int64N returns an integer uniform in [0,n); it panics if n ≤ 0.
func (r *Rand) Int64N(n int64) int64 {
	if n <= 0 {
		panic("seed: Int64N of a non-positive n")
	}
	return int64(r.Uint64N(uint64(n)))
}

// Gamma returns a draw of the gamma distribution of shape k > 0 and scale
// 1, by Marsaglia and Tsang's method ("A simple method for generating
// gamma variables", ACM TOMS 26(3), 2000): a squeeze on a cubed normal,
// accepted in more than 95 % of tries for every k ≥ 1; a shape k < 1 is
// boosted to k+1 and scaled by U^(1/k), drawn as exp(−E/k) with E unit
// exponential.
func (r *Rand) Gamma(k float64) float64 {
	if k < 1 {
		return r.Gamma(k+1) * math.Exp(-r.ExpFloat64()/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
