package workloads

import (
	"github.com/itlsim/itlsim/workloads/seed"
)

// Request is one generated request. Times are integer nanoseconds from the
// start of the run.
type Request struct {
	// ID numbers the requests 0, 1, 2, ... in arrival order. Ids are
	// unique within a run: a request without a ContentKey owns the key its
	// Seed and ID derive (Key), and the engine's prefix cache finds that
	// key's blocks only through the request's own block table
	// (kvcache.Content.Own).
	ID int
	// Arrival is when the request reaches the server, in ns.
	Arrival int64
	// InputTokens is the prompt length in tokens.
	InputTokens int
	// OutputTokens is how many tokens the request generates: the client's
	// max_tokens with ignore_eos, as vLLM's benchmarks run.
	OutputTokens int
	// Priority orders requests where a policy uses it; a lower value is
	// more important (vLLM's convention). Generators leave it 0; itlsim's
	// request format carries it.
	Priority int
	// Class names the request's traffic class ("chat", "rag", ...) when the
	// source has one (itlsim's request format); "" otherwise. Readers intern
	// the names, so requests of one class share one string.
	Class string
	// PrefixBlocks are the ids of the request's prompt blocks, in order, for
	// prefix caching: two requests whose first k ids are equal share their
	// first k·PrefixBlockTokens prompt tokens (Mooncake's hash_ids). nil when
	// the source has none. The slice is shared and must not be modified: it
	// is carved from large chunks so that reading a trace does not allocate
	// per request (its capacity is its length, so appending copies).
	PrefixBlocks []uint64
	// PrefixBlockTokens is how many prompt tokens one PrefixBlocks id covers
	// (512 in Mooncake's traces); 0 when PrefixBlocks is empty. The last
	// block may be partial: len(PrefixBlocks) = ⌈InputTokens/PrefixBlockTokens⌉
	// in Mooncake's traces.
	PrefixBlockTokens int
	// ContentKey names the request's own prompt content for automatic
	// prefix caching: requests of equal ContentKey have the same prompt
	// (beyond PrefixBlocks and the shared prefix), block for block; 0 takes
	// Seed, unique per request. A multi-turn conversation gives every turn
	// its conversation's key, since a turn's prompt is the earlier turns'
	// prompts and answers followed by the new message.
	ContentKey uint64
	// OutputKey names the request's generated tokens; 0 takes ContentKey
	// (a conversation's answers are its next turn's prompt).
	OutputKey uint64
	// SharedKey names the first SharedTokens prompt tokens, shared by every
	// request of a shared-prefix group (a system prompt, a document); 0
	// SharedTokens for none.
	SharedKey    uint64
	SharedTokens int
	// Ready is when the request reaches the scheduler, in ns, after the
	// serving front end (sim.ServerConfig); 0: at Arrival. Latencies are
	// measured from Arrival.
	Ready int64
	// Seed is this request's own seed, RequestSeed(workload seed, ID). Subsystems
	// that draw per request (speculative acceptance, for one) seed from it,
	// so every policy compared on a workload sees the same luck per request
	// whatever order it serves them in.
	Seed uint64
}

// Key is the request's content key for prefix caching: ContentKey, or the
// child "key/<ID>" of the request's Seed when it has none, unique per
// request even among requests built by hand with one Seed.
func (r *Request) Key() uint64 {
	if r.ContentKey != 0 {
		return r.ContentKey
	}
	return seed.Derive(r.Seed, "key", r.ID)
}

// Source yields requests in non-decreasing arrival order. Next does not
// allocate. A Source has one consumer: it is not safe for concurrent use.
type Source interface {
	// Next fills r with the next request and reports whether there was one;
	// once it returns false it keeps returning false.
	Next(r *Request) bool
}

// Err returns the error that ended s early, if any: a trace that became
// unreadable or malformed during a replay (New checks every row before the
// replay starts, so this happens only when the file changes underneath).
// Generated sources never fail and give nil. Call it once Next has returned
// false.
func Err(s Source) error {
	if e, ok := s.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
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

// RequestSeed returns the seed of request id in a workload seeded
// workloadSeed: its child "request/<id>", seed.Derive(workloadSeed,
// "request", id). It depends on nothing else, so changing lengths, rates
// or arrival processes never changes a request's seed.
func RequestSeed(workloadSeed uint64, id int) uint64 {
	return seed.Derive(workloadSeed, "request", id)
}

// stream returns the random stream named name under the workload's seed
// (seed.Stream), on the heap for the sources that keep it.
func stream(workloadSeed uint64, name string) *seed.Rand {
	r := seed.Stream(workloadSeed, name)
	return &r
}
