package router

import "github.com/itlsim/itlsim/workloads/seed"

// VLLMDPName is vLLM's data-parallel load balancer.
const VLLMDPName = "vllm-dp"

// vllmDP is the balancer of vLLM's data-parallel front end
// (vllm/v1/engine/core_client.py, DPLBAsyncMPClient.get_core_engine_for_request):
// the engine with the lowest 4·waiting + running wins, the lowest index
// among equals. The counts come from the DP coordinator, which publishes
// every engine's (waiting, running) every 100 ms; between publications the
// client adds each request it sends to the chosen engine's waiting count
// (the optimistic increment), and a new publication replaces those
// adjustments.
type vllmDP struct {
	pending  []int // requests sent to each engine since the last snapshot
	snapshot uint64
}

var _ Router = (*vllmDP)(nil)

func newVLLMDP(_ Config, reps []Replica, _ seed.Rand) Router {
	return &vllmDP{pending: make([]int, len(reps))}
}

func (r *vllmDP) Route(_ *Request, st *State) Decision {
	if st.Snapshot != r.snapshot {
		r.snapshot = st.Snapshot
		clear(r.pending)
	}
	i := argmin(len(st.Loads), func(i int) float64 {
		l := st.Loads[i]
		return float64(4*(l.Waiting+r.pending[i]) + l.Running)
	})
	r.pending[i]++
	return Decision{i, ReasonLeastLoaded}
}
