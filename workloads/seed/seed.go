package seed

// Mix is SplitMix64's output function (Steele, Lea and Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014).
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hash is the 64-bit FNV-1a hash of name: how a stream's name becomes
// part of its seed.
func Hash(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}

// Rand is a SplitMix64 random stream: one uint64 of state, no allocation,
// and well-mixed output even for adjacent seeds. The zero value is a valid
// stream.
type Rand struct{ s uint64 }

// New returns a stream seeded with seed, mixed first so that adjacent seeds
// give unrelated streams.
func New(seed uint64) Rand { return Rand{s: Mix(seed)} }

// FromState returns the stream whose state is s as it is (for a caller
// that has mixed its seed already).
func FromState(s uint64) Rand { return Rand{s: s} }

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

// IntN returns an integer uniform in [0,n) (n > 0; the modulo bias is
// below 2^-40 for any n under 2^24).
func (r *Rand) IntN(n int) int { return int(r.Uint64() % uint64(n)) }
