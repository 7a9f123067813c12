package delivery

import "hash/fnv"

// Rand is a SplitMix64 random stream (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014): one uint64 of
// state, no allocation, and well-mixed output even
// for adjacent seeds. The zero value is a valid stream; NewRand seeds one.
type Rand struct{ s uint64 }

// NewRand returns a stream seeded with seed (mixed, so adjacent seeds give
// unrelated streams).
func NewRand(seed uint64) Rand { return Rand{s: mix(seed)} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 { return r.next() }

// Float64 returns a number uniform in [0,1).
func (r *Rand) Float64() float64 { return r.float() }

// IntN returns an integer uniform in [0,n) (n > 0; the modulo bias is
// below 2^-40 for any n under 2^24).
func (r *Rand) IntN(n int) int { return int(r.next() % uint64(n)) }

// mix is SplitMix64's output function.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// salt names a mechanism's random stream: the FNV-1a hash of its name.
func salt(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// seed starts the stream of one mechanism for one request, so that turning
// one mechanism on or off never shifts another's draws.
// mechanism is the mixed salt, mix(salt(name)), computed once per Path.
func (r *Rand) seed(request, mechanism uint64) { r.s = mix(request ^ mechanism) }

func (r *Rand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a number uniform in [0,1).
func (r *Rand) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// open returns a number uniform in (0,1].
func (r *Rand) open() float64 { return 1 - r.float() }
