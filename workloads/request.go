package workloads

import "math/rand/v2"

// Request is one generated request. Times are integer nanoseconds from the
// start of the run.
type Request struct {
	// ID numbers the requests 0, 1, 2, ... in arrival order.
	ID int
	// Arrival is when the request reaches the server, in ns.
	Arrival int64
	// InputTokens is the prompt length in tokens.
	InputTokens int
	// OutputTokens is how many tokens the request generates: the client's
	// max_tokens with ignore_eos, as vLLM's benchmarks run.
	OutputTokens int
	// Priority orders requests where a policy uses it; a lower value is
	// more important (vLLM's convention). Always 0 for now.
	Priority int
	// Seed is this request's own seed, RequestSeed(run seed, ID). Subsystems
	// that draw per request (speculative acceptance, for one) seed from it,
	// so every policy compared on a workload sees the same luck per request
	// whatever order it serves them in.
	Seed uint64
}

// Source yields requests in non-decreasing arrival order. Next does not
// allocate. A Source has one consumer: it is not safe for concurrent use.
type Source interface {
	// Next fills r with the next request and reports whether there was one;
	// once it returns false it keeps returning false.
	Next(r *Request) bool
}

// Collect drains up to limit requests from s into a slice; limit ≤ 0 means
// all of them. It is meant for tests and tools; the engine pulls from the
// Source one request at a time.
func Collect(s Source, limit int) []Request {
	var out []Request
	var r Request
	for (limit <= 0 || len(out) < limit) && s.Next(&r) {
		out = append(out, r)
	}
	return out
}

// RequestSeed returns the seed of request id in a workload generated with
// seed: a splitmix64 mix of the two. It depends on nothing else, so changing
// lengths, rates or arrival processes never changes a request's seed.
func RequestSeed(seed uint64, id int) uint64 {
	return splitmix64(seed ^ splitmix64(uint64(id)))
}

// stream returns the random stream named name under seed. Streams with
// different names are independent, so adding draws to one never shifts
// another.
func stream(seed uint64, name string) *rand.Rand {
	s := splitmix64(seed ^ fnv1a(name))
	return rand.New(rand.NewPCG(s, splitmix64(s)))
}

// splitmix64 is the finalizer of Steele, Lea and Flood's SplitMix64: a
// bijection on uint64 whose output bits each depend on every input bit.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fnv1a is the 64-bit FNV-1a hash of s, used to turn a stream name into a
// number.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
