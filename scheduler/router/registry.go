package router

import (
	"maps"
	"slices"

	"github.com/itlsim/itlsim/workloads/seed"
)

// The registry: an explicit map literal from name to constructor; the
// list of valid names is derived from it.
var registry = map[string]struct {
	doc         string
	engineState bool    // reads engine-reported load (snapshots)
	staleness   float64 // default snapshot period, ms
	new         func(Config, []Replica, seed.Rand) Router
}{
	RoundRobinName:       {"each replica in turn", false, 0, newRoundRobin},
	RandomName:           {"a uniform seeded draw", false, 0, newRandom},
	LeastOutstandingName: {"fewest requests in flight (router-local count)", false, 0, newLeastOutstanding},
	PowerOfTwoName:       {"two seeded samples, the one with fewer requests in flight", false, 0, newPowerOfTwo},
	LeastKVName:          {"lowest KV-cache utilisation reported by the engines", true, 50, newLeastKV},
	VLLMDPName:           {"vLLM data-parallel balancer: argmin 4·waiting + running from engine snapshots, optimistic increment per pick", true, 100, newVLLMDP},
	LLMDName:             {"llm-d scheduler: weighted queue, kv-utilisation and prefix-cache scorers, max-score picker", true, 50, newLLMD},
	SGLangName:           {"SGLang cache-aware router: balance when loads diverge, else longest prefix match above a threshold, else the smallest tree", false, 0, newSGLang},
}

// Names lists the routing policies, sorted.
func Names() []string { return slices.Sorted(maps.Keys(registry)) }

// Doc is one line on what a policy does.
func Doc(name string) string { return registry[name].doc }
