package seed

import (
	"hash/fnv"
	"math"
	"testing"
)

// Hash is FNV-1a, as the standard library computes it, and Mix is the
// SplitMix64 finalizer.
func TestHashAndMixAreTheKnownFunctions(t *testing.T) {
	for _, name := range []string{"", "workload", "delivery/latency", "step-noise"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		if got, want := Hash(name), h.Sum64(); got != want {
			t.Errorf("Hash(%q) = %#x, want FNV-1a %#x", name, got, want)
		}
	}
	// SplitMix64's first output from state 0 (the reference
	// implementation's known value).
	if got := Mix(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("Mix(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
	var r Rand
	if got := r.Uint64(); got != Mix(0) {
		t.Errorf("first draw from state 0 = %#x, want Mix(0)", got)
	}
}

// A child's seed is Mix(parent ^ Mix(Hash(full name))), and numeric parts
// are the same as writing them into the name after slashes.
func TestDeriveComposesNames(t *testing.T) {
	const p = 0x1234
	if got, want := Derive(p, "workload"), Mix(p^Mix(Hash("workload"))); got != want {
		t.Errorf("Derive(p, workload) = %#x, want %#x", got, want)
	}
	for _, c := range []struct {
		name  string
		parts []int
		full  string
	}{
		{"replica", []int{3}, "replica/3"},
		{"request", []int{0}, "request/0"},
		{"request", []int{1234567890}, "request/1234567890"},
		{"measured-prompt", []int{7, 512}, "measured-prompt/7/512"},
		{"x", []int{-5}, "x/-5"},
		{"x", []int{math.MinInt64}, "x/-9223372036854775808"},
	} {
		if got, want := Derive(p, c.name, c.parts...), Derive(p, c.full); got != want {
			t.Errorf("Derive(p, %q, %v) = %#x, want Derive(p, %q) = %#x", c.name, c.parts, got, c.full, want)
		}
	}
	// Siblings, the same name under another parent, and a name with its
	// parts moved differ.
	seen := map[uint64]string{}
	for _, k := range []struct {
		p    uint64
		name string
		n    []int
	}{{p, "request", []int{1}}, {p, "request", []int{2}}, {p, "request", []int{12}}, {p, "request", []int{1, 2}},
		{p + 1, "request", []int{1}}, {p, "replica", []int{1}}, {p, "request1", nil}} {
		d := Derive(k.p, k.name, k.n...)
		if prev, ok := seen[d]; ok {
			t.Errorf("Derive(%#x, %q, %v) collides with %s", k.p, k.name, k.n, prev)
		}
		seen[d] = k.name
	}
	if got, want := Stream(p, "request", 4), (Rand{s: Derive(p, "request", 4)}); got != want {
		t.Errorf("Stream is not the stream of Derive's seed")
	}
}

// Deriving a seed and starting a stream allocate nothing: the delivery
// path and speculative decoding do both per request.
func TestDeriveDoesNotAllocate(t *testing.T) {
	id := 17
	var sink uint64
	if n := testing.AllocsPerRun(100, func() {
		r := Stream(Derive(42, "request", id, 3), "delivery/latency")
		sink += r.Uint64()
	}); n != 0 {
		t.Errorf("Derive and Stream allocate %g times", n)
	}
	_ = sink
}

// IntN is uniform: a chi-square test over 7 values (6 degrees of freedom,
// 0.1 % critical value 22.46), and Uint64N near 2^64, where a modulo would
// be visibly biased, keeps the lower half at one half.
func TestIntNIsUniform(t *testing.T) {
	r := Stream(1, "test")
	const n, k = 700_000, 7
	var counts [k]float64
	for range n {
		counts[r.IntN(k)]++
	}
	var chi float64
	for _, c := range counts {
		chi += (c - n/k) * (c - n/k) / (n / k)
	}
	if chi > 22.46 {
		t.Errorf("IntN(7) counts %v: chi-square %.1f > 22.46", counts, chi)
	}
	big := uint64(3) << 62 // a modulo would put half the draws below 2^62
	var low float64
	for range n {
		if x := r.Uint64N(big); x >= big {
			t.Fatalf("Uint64N(%d) = %d", big, x)
		} else if x < big/2 {
			low++
		}
	}
	if math.Abs(low/n-0.5) > 5*0.5/math.Sqrt(n) {
		t.Errorf("Uint64N(3·2^62): %.4f of draws in the lower half, want 0.5", low/n)
	}
}

// Gamma has mean k and variance k for shapes below, at and above 1 (the
// boosted branch, the boundary and the main method), within 5 standard
// errors over 400 000 draws; a wrong squeeze or boost moves one of them.
func TestGammaMoments(t *testing.T) {
	const n = 400_000
	for _, k := range []float64{0.05, 0.3, 1, 2.5, 40} {
		r := Stream(7, "gamma")
		var s, s2 float64
		for range n {
			x := r.Gamma(k)
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("Gamma(%g) drew %g", k, x)
			}
			s += x
			s2 += x * x
		}
		mean := s / n
		v := s2/n - mean*mean
		// The sample mean's standard error is √(k/n); the variance's is
		// √((μ4 − σ⁴)/n) with μ4 = 3k² + 6k for a gamma.
		if se := math.Sqrt(k / n); math.Abs(mean-k) > 5*se {
			t.Errorf("Gamma(%g): mean %.5f, want %g ± %.5f", k, mean, k, 5*se)
		}
		if se := math.Sqrt((3*k*k + 6*k - k*k) / n); math.Abs(v-k) > 5*se {
			t.Errorf("Gamma(%g): variance %.5f, want %g ± %.5f", k, v, k, 5*se)
		}
	}
}
