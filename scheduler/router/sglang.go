package router

import (
	"errors"
	"fmt"

	"github.com/itlsim/itlsim/workloads/seed"
)

// SGLangName is SGLang's cache-aware router.
const SGLangName = "sglang-cache-aware"

// SGLangConfig holds the cache-aware router's thresholds.
type SGLangConfig struct {
	// CacheThreshold: the longest prefix match must cover more than this
	// share of the prompt for the router to follow it. Default 0.3.
	CacheThreshold float64 `yaml:"cache_threshold" json:"cache_threshold"`
	// BalanceAbsThreshold and BalanceRelThreshold: the loads are
	// imbalanced when max − min > abs and max > rel × min; then the least
	// loaded replica wins whatever it caches. Defaults 64 and 1.5.
	BalanceAbsThreshold int     `yaml:"balance_abs_threshold" json:"balance_abs_threshold"`
	BalanceRelThreshold float64 `yaml:"balance_rel_threshold" json:"balance_rel_threshold"`
	// BlockTokens is the unit of the router's trees for requests without
	// block ids of their own. Default 16.
	BlockTokens int `yaml:"block_tokens" json:"block_tokens"`
	// MaxTreeTokens bounds each replica's tree, in tokens; the oldest
	// entries are evicted beyond it. Default 16,777,216: SGLang's
	// max_tree_size of 2^26 characters at about 4 characters a token. The
	// tree does not know what the replica's cache evicted, so it remembers
	// far more than the replica holds, as SGLang's does.
	MaxTreeTokens int `yaml:"max_tree_tokens" json:"max_tree_tokens"`
}

// DefaultSGLang holds the SGLang router's defaults (sgl-router /
// SMG --cache-threshold 0.3, --balance-abs-threshold 64,
// --balance-rel-threshold 1.5).
func DefaultSGLang() SGLangConfig {
	return SGLangConfig{CacheThreshold: 0.3, BalanceAbsThreshold: 64, BalanceRelThreshold: 1.5, BlockTokens: 16, MaxTreeTokens: 1 << 24}
}

func (c SGLangConfig) validate() error {
	var errs []error
	if !(c.CacheThreshold >= 0 && c.CacheThreshold <= 1) {
		errs = append(errs, fmt.Errorf("cluster.router.sglang.cache_threshold: must be in [0, 1], got %g", c.CacheThreshold))
	}
	if c.BalanceAbsThreshold < 0 {
		errs = append(errs, fmt.Errorf("cluster.router.sglang.balance_abs_threshold: must be ≥ 0, got %d", c.BalanceAbsThreshold))
	}
	if !(c.BalanceRelThreshold >= 1 && c.BalanceRelThreshold <= 1e6) {
		errs = append(errs, fmt.Errorf("cluster.router.sglang.balance_rel_threshold: must be in [1, 1e6], got %g", c.BalanceRelThreshold))
	}
	if c.BlockTokens < 1 || c.BlockTokens > 1<<20 {
		errs = append(errs, fmt.Errorf("cluster.router.sglang.block_tokens: must be in [1, 1048576], got %d", c.BlockTokens))
	}
	if c.MaxTreeTokens < 1 || c.MaxTreeTokens > 1<<40 {
		errs = append(errs, fmt.Errorf("cluster.router.sglang.max_tree_tokens: must be in [1, 2^40], got %d", c.MaxTreeTokens))
	}
	return errors.Join(errs...)
}

// sglang follows SGLang's cache-aware router (sgl-router's
// CacheAwarePolicy): with the load measured as requests in flight, when
// the loads are imbalanced the least loaded replica wins; otherwise the
// replica whose tree matches the longest prefix of the prompt wins if the
// match covers more than cache_threshold of it, else the replica whose
// tree is smallest. The chosen replica's tree then holds the prompt. The
// real router matches characters of the text; itlsim matches the prompt's
// block ids (unique ids for a prompt that shares nothing).
type sglang struct {
	cfg     SGLangConfig
	idx     []*prefixIndex
	scratch []uint64
}

var _ Router = (*sglang)(nil)

func newSGLang(c Config, reps []Replica, _ seed.Rand) Router {
	r := &sglang{cfg: c.SGLang}
	for range reps {
		r.idx = append(r.idx, newPrefixIndex(c.SGLang.MaxTreeTokens))
	}
	return r
}

func (r *sglang) Route(req *Request, st *State) Decision {
	blocks, unit := blocksOf(req, r.cfg.BlockTokens, r.scratch)
	if len(req.Prefix) == 0 {
		r.scratch = blocks
	}
	lo, hi := 0, 0
	for i, l := range st.Loads {
		if l.InFlight < st.Loads[lo].InFlight {
			lo = i
		}
		if l.InFlight > st.Loads[hi].InFlight {
			hi = i
		}
	}
	minL, maxL := st.Loads[lo].InFlight, st.Loads[hi].InFlight
	var d Decision
	if maxL-minL > r.cfg.BalanceAbsThreshold && float64(maxL) > r.cfg.BalanceRelThreshold*float64(minL) {
		d = Decision{lo, ReasonImbalance}
	} else {
		best, bestMatch := 0, -1
		for i := range st.Loads {
			if m := r.idx[i].match(blocks, unit, req.PromptTokens); m > bestMatch {
				best, bestMatch = i, m
			}
		}
		if req.PromptTokens > 0 && float64(bestMatch)/float64(req.PromptTokens) > r.cfg.CacheThreshold {
			d = Decision{best, ReasonPrefixMatch}
		} else {
			small := 0 // fewer in flight, then the lower index, break ties
			for i := range r.idx {
				if a, b := r.idx[i].size, r.idx[small].size; a < b || (a == b && st.Loads[i].InFlight < st.Loads[small].InFlight) {
					small = i
				}
			}
			d = Decision{small, ReasonSmallestTree}
		}
	}
	r.idx[d.Replica].insert(blocks, unit, req.PromptTokens)
	return d
}
