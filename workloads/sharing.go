package workloads

import (
	"container/heap"
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// SharedPrefix makes groups of requests whose prompts start with the same
// tokens — a system prompt, a document asked about several times — which
// automatic prefix caching reuses.
type SharedPrefix struct {
	// Groups is the number of distinct prefixes; 0 turns sharing off.
	Groups int `yaml:"groups" json:"groups"`
	// Tokens is each prefix's length; the request's drawn prompt follows it.
	Tokens int `yaml:"tokens" json:"tokens"`
	// Share is the probability that a request carries one of the prefixes
	// (picked uniformly), in (0, 1]; 0 means 1.
	Share float64 `yaml:"share" json:"share"`
}

// Conversation makes multi-turn conversations: turn k's prompt holds the
// earlier turns' prompts and answers followed by the new message, so the
// earlier turns' KV can be reused.
type Conversation struct {
	// Turns per conversation; 0 or 1 turns conversations off.
	Turns int `yaml:"turns" json:"turns"`
	// ThinkS is the mean time in seconds (exponential) from one turn's
	// arrival to the earliest arrival of the next: the user reading the
	// answer and typing. The arrival process still sets every arrival: an
	// arrival takes the next turn of the conversation that has waited its
	// think time longest, or starts a new conversation when none is ready.
	ThinkS float64 `yaml:"think_s" json:"think_s"`
	// MaxTokens ends a conversation whose next prompt would exceed it;
	// 0 means 32768.
	MaxTokens int `yaml:"max_tokens" json:"max_tokens"`
}

func (p SharedPrefix) on() bool { return p.Groups > 0 }
func (c Conversation) on() bool { return c.Turns > 1 }

func (p SharedPrefix) validate(bad func(field, format string, args ...any)) {
	switch {
	case p.Groups < 0 || p.Groups > 1_000_000:
		bad("shared_prefix.groups", "must be in [0, 1000000] (0: off), got %d", p.Groups)
	case p.on() && !(p.Tokens >= 1 && p.Tokens <= MaxLength):
		bad("shared_prefix.tokens", "must be in [1, %d] tokens, got %d", MaxLength, p.Tokens)
	case !(p.Share >= 0 && p.Share <= 1):
		bad("shared_prefix.share", "must be a probability in (0, 1] (0 means 1), got %g", p.Share)
	}
}

func (c Conversation) validate(bad func(field, format string, args ...any)) {
	switch {
	case c.Turns < 0 || c.Turns > 10000:
		bad("conversation.turns", "must be in [0, 10000] (0 or 1: off), got %d", c.Turns)
	case !(c.ThinkS >= 0 && c.ThinkS <= maxHorizonS):
		bad("conversation.think_s", "must be a time ≥ 0 s, got %g", c.ThinkS)
	case c.MaxTokens < 0 || c.MaxTokens > MaxLength:
		bad("conversation.max_tokens", "must be in [0, %d] (0: 32768), got %d", MaxLength, c.MaxTokens)
	}
}

// conv is a conversation waiting for its next turn.
type conv struct {
	ready   int64  // earliest arrival of the next turn, ns
	key     uint64 // content key of the whole conversation
	history int    // tokens of the earlier turns: prompts and answers
	turns   int    // turns so far
	order   int    // creation order, to break ties
	// sharedKey and sharedTokens are the shared prefix its first turn
	// started with; every turn's prompt starts with it.
	sharedKey    uint64
	sharedTokens int
}

type convHeap []conv

func (h convHeap) Len() int { return len(h) }
func (h convHeap) Less(i, j int) bool {
	if h[i].ready != h[j].ready {
		return h[i].ready < h[j].ready
	}
	return h[i].order < h[j].order
}
func (h convHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *convHeap) Push(x any)   { *h = append(*h, x.(conv)) }
func (h *convHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sharing gives a source's requests content that later requests share:
// shared prefixes and conversation turns. Lengths drawn by the source are
// each request's own part; the shared part is added to its prompt.
type sharing struct {
	src     Source
	prefix  SharedPrefix
	conv    Conversation
	rng     *seed.Rand
	salt    uint64
	waiting convHeap
	started int
}

func withSharing(src Source, c Config, runSeed uint64) Source {
	if !c.SharedPrefix.on() && !c.Conversation.on() {
		return src
	}
	return &sharing{src: src, prefix: c.SharedPrefix, conv: c.Conversation, rng: stream(runSeed, "sharing"),
		salt: seed.Derive(runSeed, "content")}
}

func (s *sharing) Next(r *Request) bool {
	if !s.src.Next(r) {
		return false
	}
	var c *conv
	if s.conv.on() {
		c = s.nextTurn(r)
		if c.turns > 0 {
			// A later turn: its prompt is the conversation so far, which
			// starts with the prefix (if any) its first turn had.
			r.SharedKey, r.SharedTokens = c.sharedKey, c.sharedTokens
			r.InputTokens = min(r.InputTokens+c.history, MaxLength)
			s.record(c, r)
			return true
		}
	}
	if s.prefix.on() && (s.prefix.Share == 0 || s.rng.Float64() < s.prefix.Share) {
		g := s.rng.IntN(s.prefix.Groups)
		r.SharedKey = seed.Derive(s.salt, "shared-prefix", g)
		r.SharedTokens = s.prefix.Tokens
		r.InputTokens = min(r.InputTokens+s.prefix.Tokens, MaxLength)
	}
	if c != nil {
		c.sharedKey, c.sharedTokens = r.SharedKey, r.SharedTokens
		s.record(c, r)
	}
	return true
}

// nextTurn returns the conversation r continues — the one that has waited
// its think time longest — or a new one (turns 0).
func (s *sharing) nextTurn(r *Request) *conv {
	limit := s.conv.MaxTokens
	if limit == 0 {
		limit = 32768
	}
	if len(s.waiting) > 0 && s.waiting[0].ready <= r.Arrival {
		c := heap.Pop(&s.waiting).(conv)
		if c.history+r.InputTokens+r.OutputTokens <= limit {
			return &c
		}
		// Too long: the conversation ends and this arrival starts another.
	}
	s.started++
	return &conv{key: seed.Derive(s.salt, "conversation", s.started), order: s.started}
}

// record makes r a turn of c and schedules c's next turn, if any.
func (s *sharing) record(c *conv, r *Request) {
	r.ContentKey, r.OutputKey = c.key, c.key
	c.turns++
	c.history = r.InputTokens + r.OutputTokens
	if c.turns < s.conv.Turns {
		think := s.rng.ExpFloat64() * s.conv.ThinkS * 1e9
		c.ready = r.Arrival + int64(math.Min(think, maxArrivalNs/4))
		heap.Push(&s.waiting, *c)
	}
}

// Err passes the source's error on.
func (s *sharing) Err() error { return Err(s.src) }
