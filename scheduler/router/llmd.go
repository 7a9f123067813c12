package router

import (
	"errors"
	"fmt"
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// LLMDName is llm-d's inference scheduler.
const LLMDName = "llm-d"

// LLMDConfig weights llm-d's scorers. A weight of 0 turns a scorer off.
type LLMDConfig struct {
	// QueueWeight weights the queue scorer: (max − q) / (max − min) over
	// the replicas' waiting requests, 1 for all when they are equal.
	// Default 2, as in llm-d's default scheduling profile.
	QueueWeight float64 `yaml:"queue_weight" json:"queue_weight"`
	// KVWeight weights the kv-cache-utilization scorer: 1 − utilisation.
	// Default 2 (itlsim's choice, equal to the queue's).
	KVWeight float64 `yaml:"kv_weight" json:"kv_weight"`
	// PrefixWeight weights the prefix-cache scorer: the share of the
	// request's prompt blocks the router-side index holds for the replica.
	// Default 3, as in llm-d's default scheduling profile.
	PrefixWeight float64 `yaml:"prefix_weight" json:"prefix_weight"`
	// BlockTokens is the block size, in tokens, of the router's prefix
	// index for requests without block ids of their own. Default 16.
	BlockTokens int `yaml:"block_tokens" json:"block_tokens"`
	// PrefixScorer is how the prefix-cache scorer learns what a replica
	// caches: "approximate" (default; llm-d's prefix-cache-scorer fed by
	// the approximate producer, an LRU of the block hashes of the prompts
	// the router sent to each replica, bounded by its KV capacity) or
	// "precise" (llm-d's precise-prefix-cache-scorer, fed by the KV-cache
	// indexer that subscribes to the replicas' KV events: the blocks each
	// replica's cache holds when the request arrives).
	PrefixScorer string `yaml:"prefix_scorer" json:"prefix_scorer"`
}

// The prefix-cache scorer's sources.
const (
	PrefixApproximate = "approximate"
	PrefixPrecise     = "precise"
)

// DefaultLLMD is llm-d's default profile: queue 2, prefix-cache 3 (Red
// Hat OpenShift AI, "Configuring scheduler settings for LLM inference
// services"), plus kv-utilisation 2.
func DefaultLLMD() LLMDConfig {
	return LLMDConfig{QueueWeight: 2, KVWeight: 2, PrefixWeight: 3, BlockTokens: 16, PrefixScorer: PrefixApproximate}
}

func (c LLMDConfig) validate() error {
	var errs []error
	for _, w := range []struct {
		name string
		v    float64
	}{{"queue_weight", c.QueueWeight}, {"kv_weight", c.KVWeight}, {"prefix_weight", c.PrefixWeight}} {
		if !(w.v >= 0 && w.v <= 1e6) {
			errs = append(errs, fmt.Errorf("cluster.router.llm_d.%s: must be in [0, 1e6], got %g", w.name, w.v))
		}
	}
	if c.BlockTokens < 1 || c.BlockTokens > 1<<20 {
		errs = append(errs, fmt.Errorf("cluster.router.llm_d.block_tokens: must be in [1, 1048576], got %d", c.BlockTokens))
	}
	if c.PrefixScorer != PrefixApproximate && c.PrefixScorer != PrefixPrecise {
		errs = append(errs, fmt.Errorf("cluster.router.llm_d.prefix_scorer: must be %q or %q, got %q", PrefixApproximate, PrefixPrecise, c.PrefixScorer))
	}
	return errors.Join(errs...)
}

// llmD follows llm-d's scheduler (the Gateway API inference extension's
// endpoint picker with llm-d's plugins): every replica gets the weighted
// sum of its scores, the max-score picker takes the highest, breaking
// ties by a seeded draw; the prefix-cache plugin then records the
// request's blocks as cached on the chosen replica.
type llmD struct {
	cfg     LLMDConfig
	idx     []*prefixIndex
	rnd     seed.Rand
	ties    []int
	scratch []uint64
}

var _ Router = (*llmD)(nil)

func newLLMD(c Config, reps []Replica, rnd seed.Rand) Router {
	r := &llmD{cfg: c.LLMD, rnd: rnd}
	for _, rep := range reps {
		r.idx = append(r.idx, newPrefixIndex(rep.KVTokens))
	}
	return r
}

func (r *llmD) Route(req *Request, st *State) Decision {
	minQ, maxQ := math.MaxInt, math.MinInt
	for _, l := range st.Loads {
		minQ, maxQ = min(minQ, l.Waiting), max(maxQ, l.Waiting)
	}
	precise := r.cfg.PrefixScorer == PrefixPrecise
	var blocks []uint64
	unit := 0
	if !precise {
		blocks, unit = blocksOf(req, r.cfg.BlockTokens, r.scratch)
		if len(req.Prefix) == 0 {
			r.scratch = blocks
		}
	}
	best := math.Inf(-1)
	r.ties = r.ties[:0]
	reason := ReasonTopScore
	for i, l := range st.Loads {
		q := 1.0
		if maxQ > minQ {
			q = float64(maxQ-l.Waiting) / float64(maxQ-minQ)
		}
		p := 0.0
		if req.PromptTokens > 0 && r.cfg.PrefixWeight > 0 {
			m := l.CachedTokens
			if !precise {
				m = r.idx[i].match(blocks, unit, req.PromptTokens)
			}
			p = float64(m) / float64(req.PromptTokens)
		}
		s := r.cfg.QueueWeight*q + r.cfg.KVWeight*(1-l.KVUtilization) + r.cfg.PrefixWeight*p
		switch {
		case s > best:
			best = s
			r.ties = append(r.ties[:0], i)
		case s == best:
			r.ties = append(r.ties, i)
		}
	}
	i := r.ties[0]
	if len(r.ties) > 1 {
		i = r.ties[r.rnd.IntN(len(r.ties))]
	}
	switch {
	case r.cfg.PrefixWeight > 0 && precise:
		if st.Loads[i].CachedTokens > 0 {
			reason = ReasonPrefixMatch
		}
	case r.cfg.PrefixWeight > 0:
		if r.idx[i].match(blocks, unit, req.PromptTokens) > 0 {
			reason = ReasonPrefixMatch
		}
		r.idx[i].insert(blocks, unit, req.PromptTokens)
	}
	return Decision{i, reason}
}
