package sim

import (
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/sim/memory"
	"github.com/itlsim/itlsim/workloads"
)

// DefaultMaxMemory is the cap on an engine's estimated memory when
// Config.MaxMemoryBytes is 0 (memory.DefaultMax).
const DefaultMaxMemory = memory.DefaultMax

// MemoryEstimate is an engine's estimated peak memory in bytes for s with
// the given number of requests (negative: the workload's own count,
// workloads.RequestEstimate: Requests or Rate × DurationS, a closed loop's
// bound, a trace's rows; a closed loop bounded by its duration alone,
// closedLoopRequests).
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
		if workloads.ClosedLoopByDuration(s.Config.Workload) {
			n = closedLoopRequests(s)
		}
	}
	for _, p := range setupPools(s) {
		b := float64(p.Setup.Blocks) + float64(p.Setup.SwapBlocks)
		for _, t := range p.Setup.Tiers {
			b += float64(t.Blocks)
		}
		blocks += b * float64(p.Replicas)
	}
	return n, blocks
}

func setupPools(s *Setup) []Pool {
	if len(s.Pools) == 0 {
		return []Pool{{Replicas: 1, Setup: s}}
	}
	return s.Pools
}

// closedLoopRequests is memory.ClosedLoopRequests for s's workload and
// pools, each step priced by its replica's cost model.
func closedLoopRequests(s *Setup) float64 {
	w := s.Config.Workload
	in, out := workloads.MeanLength(w.InputLen, s.Classes, true), workloads.MeanLength(w.OutputLen, s.Classes, false)
	replicas := 0
	var pools []memory.LoopPool
	for _, p := range setupPools(s) {
		replicas += max(p.Replicas, 1)
		ps := p.Setup
		if ps == nil || ps.Cost == nil {
			continue
		}
		lp := memory.LoopPool{Replicas: p.Replicas, Seqs: max(ps.Config.Scheduler.MaxNumSeqs, 1) * max(ps.DP, 1)}
		if ps.Spec != nil {
			lp.SpecK = ps.Spec.Config().K
		}
		lp.StepNS = func(b int) int64 {
			var batch cost.Batch
			for range b {
				batch.AddDecode(int(in + out/2))
			}
			return ps.Cost.StepNS(&batch)
		}
		pools = append(pools, lp)
	}
	return memory.ClosedLoopRequests(float64(max(w.Users, 1)), w.ThinkS, w.DurationS, out, replicas, pools)
}
