package sim

import (
	"github.com/itlsim/itlsim/sim/memory"
	"github.com/itlsim/itlsim/workloads"
)

// DefaultMaxMemory is the cap on an engine's estimated memory when
// Config.MaxMemoryBytes is 0 (memory.DefaultMax).
const DefaultMaxMemory = memory.DefaultMax

// MemoryEstimate is an engine's estimated peak memory in bytes for s with
// the given number of requests (negative: the workload's own count,
// workloads.RequestEstimate: Requests or Rate × DurationS, a closed loop's
// bound, a trace's rows).
func MemoryEstimate(s *Setup, requests int64) float64 {
	return memory.Estimate(memoryTerms(s, requests))
}

// checkMemory refuses a setup whose estimate is over its cap.
func checkMemory(s *Setup, requests int64) error {
	n, blocks := memoryTerms(s, requests)
	return memory.Check(n, blocks, float64(s.Config.MaxMemoryBytes))
}

// memoryTerms are what the estimate counts: the requests and every
// replica's KV blocks (GPU, swap and offload tiers).
func memoryTerms(s *Setup, requests int64) (n, blocks float64) {
	n = float64(requests)
	if requests < 0 {
		n = workloads.RequestEstimate(s.Config.Workload)
	}
	pools := s.Pools
	if len(pools) == 0 {
		pools = []Pool{{Replicas: 1, Setup: s}}
	}
	for _, p := range pools {
		b := float64(p.Setup.Blocks) + float64(p.Setup.SwapBlocks)
		for _, t := range p.Setup.Tiers {
			b += float64(t.Blocks)
		}
		blocks += b * float64(p.Replicas)
	}
	return n, blocks
}
