package memory

import "math"

// LoopPool is one pool of replicas as a closed loop's estimate sees it.
type LoopPool struct {
	Replicas int
	// Seqs is the most sequences a replica runs at once (max_num_seqs
	// times its data-parallel ranks).
	Seqs int
	// StepNS prices a decode step of b sequences at the loop's mean
	// context.
	StepNS func(b int) int64
	// SpecK is the speculative draft length, 0 without speculation.
	SpecK int
}

// ClosedLoopRequests estimates the requests of a closed loop that only its
// duration bounds: users, each in a cycle of think time and request time,
// over durationS, as Little's law counts them. A request's time is its
// mean output length (outLen) in decode steps of the batch the users make
// on a replica (their share of the replicas, at most Seqs), priced by the
// pool's StepNS; speculative decoding divides the steps by its draft
// length plus one. Prefill, queueing and preemption are left out, so the
// estimate is high rather than low: for 1000 users thinking 1 s over
// 1000 s on the default scenario it is 5.05e4 requests, where the run
// sends 23064 (itlsim run with that workload, and --max-memory 1MiB to
// see the estimate). The replicas finish at most Seqs requests per
// request time each, which bounds a loop of more users than they hold.
// replicas counts every pool's replicas, priced or not; pools are the
// priced ones.
func ClosedLoopRequests(users, thinkS, durationS, outLen float64, replicas int, pools []LoopPool) float64 {
	rate := 0.0            // the requests/s the replicas can finish at most
	fastest := math.Inf(1) // the shortest request time, seconds
	perReplica := math.Ceil(users / float64(replicas))
	for _, p := range pools {
		b := int(min(perReplica, float64(p.Seqs)))
		steps := max(outLen-1, 1)
		if p.SpecK > 0 {
			steps /= float64(p.SpecK + 1)
		}
		t := steps * float64(max(p.StepNS(b), 1)) / 1e9
		fastest = min(fastest, t)
		rate += float64(max(p.Replicas, 1)) * float64(b) / t
	}
	if math.IsInf(fastest, 1) {
		return users
	}
	rate = min(rate, users/(max(thinkS, 0)+fastest))
	return users + rate*durationS
}
