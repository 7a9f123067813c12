package router

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

// Request is what a router sees of an arriving request.
type Request struct {
	ID           int
	PromptTokens int
	// Prefix are the prompt's block ids (content identity: equal ids are
	// equal tokens), PrefixUnit the tokens one id covers; nil when the
	// workload says nothing of shared content.
	Prefix     []uint64
	PrefixUnit int
	// Content names the prompt's blocks by content for a request without
	// Prefix, the way the replicas' KV caches name them (generated shared
	// prefixes, conversations); nil names every block uniquely.
	Content BlockNamer
}

// BlockNamer names a prompt's blocks of bs tokens, in order, appending to
// dst[:0] (kvcache.Content does, with the ids the KV cache uses).
type BlockNamer interface {
	PromptBlocks(bs int, dst []uint64) []uint64
}

// Load is one replica as the router sees it.
type Load struct {
	// InFlight counts requests the router sent to the replica that have
	// not ended: a router-local counter, always fresh.
	InFlight int
	// Waiting, Running and KVUtilization are the engine's report as of the
	// last snapshot (live when the staleness is 0).
	Waiting       int
	Running       int
	KVUtilization float64
	// CachedTokens is how many leading prompt tokens of the request being
	// routed the replica's KV cache holds now, as its KV events tell a
	// subscriber; filled only for a router that asks (Config.UsesKVEvents).
	CachedTokens int
}

// State is the cluster as the router sees it when it routes a request.
type State struct {
	Loads []Load
	// Snapshot counts the engine snapshots taken so far; it changes when
	// the engine-reported fields of Loads are refreshed.
	Snapshot uint64
}

// Reason says why a router chose a replica.
type Reason uint8

// Reasons.
const (
	ReasonTurn         Reason = iota // round-robin's turn
	ReasonRandom                     // a uniform draw
	ReasonLeastLoaded                // the lowest load by the router's measure
	ReasonPrefixMatch                // the longest cached prefix
	ReasonImbalance                  // loads too far apart: the least loaded, ignoring the cache
	ReasonSmallestTree               // no prefix matched enough: the replica caching least
	ReasonTopScore                   // the highest weighted score
	NumReasons
)

var reasonNames = [NumReasons]string{"turn", "random", "least-loaded", "prefix-match", "imbalance", "smallest-tree", "top-score"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Decision is a router's choice: the replica's index and why.
type Decision struct {
	Replica int
	Reason  Reason
}

// Router picks the replica for each arriving request. Route is called in
// arrival order; it may update the router's own state (a turn counter, a
// prefix index, optimistic load adjustments).
type Router interface {
	Route(req *Request, st *State) Decision
}

// Replica describes one replica to a router's constructor: the size of its
// KV cache, which bounds what a router-side prefix index remembers of it.
type Replica struct {
	KVTokens int // KV cache capacity in tokens
}

// Config selects and tunes the router; a scenario's cluster.router maps
// onto it.
type Config struct {
	// Policy names the routing rule (see Names). Default round-robin.
	Policy string `yaml:"policy" json:"policy"`
	// StalenessMS is how often, in milliseconds of simulated time, engines
	// publish the load snapshot routers that read engine state see; 0
	// reads live state (an oracle). Negative (the default) takes the
	// policy's own: 100 ms for vllm-dp (vLLM's coordinator publishes every
	// 100 ms), 50 ms for least-kv and llm-d (the Gateway API inference
	// extension refreshes endpoint metrics every 50 ms), and 0 for the
	// policies that use only router-local counters.
	StalenessMS float64 `yaml:"staleness_ms" json:"staleness_ms"`
	// LLMD weights llm-d's scorers.
	LLMD LLMDConfig `yaml:"llm_d" json:"llm_d"`
	// SGLang tunes SGLang's cache-aware router.
	SGLang SGLangConfig `yaml:"sglang" json:"sglang"`
}

// DefaultConfig is round-robin with each policy's default settings.
func DefaultConfig() Config {
	return Config{Policy: RoundRobinName, StalenessMS: -1, LLMD: DefaultLLMD(), SGLang: DefaultSGLang()}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	if _, ok := registry[c.Policy]; !ok {
		return fmt.Errorf("cluster.router.policy: unknown router %q; valid: %s", c.Policy, strings.Join(Names(), ", "))
	}
	if math.IsNaN(c.StalenessMS) || c.StalenessMS > 3.6e6 || (c.StalenessMS < 0 && c.StalenessMS != -1) {
		return fmt.Errorf("cluster.router.staleness_ms: must be 0 (live state) up to 3600000 ms, or -1 for the router's default; got %g", c.StalenessMS)
	}
	if c.StalenessMS > 0 && c.StalenessMS < 1 {
		return fmt.Errorf("cluster.router.staleness_ms: must be 0 (live state) or at least 1 ms, got %g", c.StalenessMS)
	}
	return errors.Join(c.LLMD.validate(), c.SGLang.validate())
}

// Staleness is the snapshot period in milliseconds the policy runs with:
// the configured one, or the policy's default; 0 when the policy reads no
// engine state.
func (c Config) Staleness() float64 {
	e, ok := registry[c.Policy]
	if !ok || !e.engineState {
		return 0
	}
	if c.StalenessMS >= 0 {
		return c.StalenessMS
	}
	return e.staleness
}

// UsesKVEvents reports whether the policy reads each replica's cached
// prefix for the request being routed (Load.CachedTokens): llm-d with its
// precise prefix-cache scorer.
func (c Config) UsesKVEvents() bool {
	return c.Policy == LLMDName && c.LLMD.PrefixScorer == PrefixPrecise && c.LLMD.PrefixWeight > 0
}

// UsesEngineState reports whether the policy reads engine-reported load
// (and so needs snapshots).
func (c Config) UsesEngineState() bool {
	e, ok := registry[c.Policy]
	return ok && e.engineState
}

// New builds the configured router for the given replicas; rnd is the
// stream its random choices draw from (the engine's is the run seed's
// "router", see package seed).
func New(c Config, replicas []Replica, rnd seed.Rand) (Router, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(replicas) == 0 {
		return nil, errors.New("cluster: no replicas to route to")
	}
	return registry[c.Policy].new(c, replicas, rnd), nil
}

// argmin returns the index of the smallest score, the lowest index among
// equals (vLLM's and most routers' tie-break).
func argmin(n int, score func(i int) float64) int {
	best, bs := 0, math.Inf(1)
	for i := range n {
		if s := score(i); s < bs {
			best, bs = i, s
		}
	}
	return best
}
