package sim

import (
	"math"

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

// closedLoopRequests estimates the requests of a closed loop that only its
// duration bounds: its users, each in a cycle of think time and request
// time, over the duration, as Little's law counts them. A request's time is
// its mean output length in decode steps of the batch the users make on a
// replica (at most max_num_seqs, at the mean context), priced by the
// replica's cost model; speculative decoding divides the steps by its draft
// length plus one. Prefill, queueing and preemption are left out, so the
// estimate is high rather than low: for 1000 users thinking 1 s over
// 1000 s on the default scenario it is 5.05e4 requests, where the run
// sends 23064 (itlsim run with that workload, and --max-memory 1MiB to
// see the estimate). The replicas finish at most max_num_seqs requests per
// request time each, which bounds a loop of more users than they hold.
func closedLoopRequests(s *Setup) float64 {
	w := s.Config.Workload
	users := float64(max(w.Users, 1))
	in, out := meanLength(w.InputLen, s.Classes, true), meanLength(w.OutputLen, s.Classes, false)
	replicas := 0
	for _, p := range setupPools(s) {
		replicas += max(p.Replicas, 1)
	}
	rate := 0.0            // the requests/s the replicas can finish at most
	fastest := math.Inf(1) // the shortest request time, seconds
	perReplica := math.Ceil(users / float64(replicas))
	for _, p := range setupPools(s) {
		ps := p.Setup
		if ps == nil || ps.Cost == nil {
			continue
		}
		seqs := max(ps.Config.Scheduler.MaxNumSeqs, 1) * max(ps.DP, 1)
		b := int(min(perReplica, float64(seqs)))
		var batch cost.Batch
		for range b {
			batch.AddDecode(int(in + out/2))
		}
		steps := max(out-1, 1)
		if ps.Spec != nil {
			steps /= float64(ps.Spec.Config().K + 1)
		}
		t := steps * float64(max(ps.Cost.StepNS(&batch), 1)) / 1e9
		fastest = min(fastest, t)
		rate += float64(max(p.Replicas, 1)) * float64(b) / t
	}
	if math.IsInf(fastest, 1) {
		return users
	}
	rate = min(rate, users/(max(w.ThinkS, 0)+fastest))
	return users + rate*w.DurationS
}

// meanLength is d's mean, or, without d, the shortest mean of the classes'
// lengths (input when in, else output): 1 when none is known.
func meanLength(d workloads.Dist, classes []workloads.Class, in bool) float64 {
	m := math.Inf(1)
	if !d.IsZero() {
		m = d.Mean()
	}
	for _, c := range classes {
		cd := c.OutputLen
		if in {
			cd = c.InputLen
		}
		if !cd.IsZero() && cd.Mean() < m {
			m = cd.Mean()
		}
	}
	if !(m >= 1) || math.IsInf(m, 1) {
		return 1
	}
	return m
}
