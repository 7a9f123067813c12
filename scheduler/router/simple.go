package router

import "github.com/itlsim/itlsim/workloads/seed"

// Policy names of the load-only routers.
const (
	RoundRobinName       = "round-robin"
	RandomName           = "random"
	LeastOutstandingName = "least-outstanding"
	PowerOfTwoName       = "power-of-two"
	LeastKVName          = "least-kv"
)

// roundRobin sends request k to replica k mod N: the default of most load
// balancers (Kubernetes Services, Envoy's ROUND_ROBIN, vLLM production
// stack's roundrobin router).
type roundRobin struct{ n, next int }

var _ Router = (*roundRobin)(nil)

func newRoundRobin(_ Config, reps []Replica, _ seed.Rand) Router { return &roundRobin{n: len(reps)} }

func (r *roundRobin) Route(*Request, *State) Decision {
	i := r.next
	r.next = (r.next + 1) % r.n
	return Decision{i, ReasonTurn}
}

// random draws a replica uniformly from the router's own stream (Envoy's
// RANDOM, SGLang's random policy).
type random struct {
	n   int
	rnd seed.Rand
}

var _ Router = (*random)(nil)

func newRandom(_ Config, reps []Replica, rnd seed.Rand) Router {
	return &random{n: len(reps), rnd: rnd}
}

func (r *random) Route(*Request, *State) Decision {
	return Decision{r.rnd.IntN(r.n), ReasonRandom}
}

// leastOutstanding sends a request to the replica with the fewest requests
// in flight by the router's own count, trying tied replicas in turn
// (NGINX's least_conn: "if there are several such servers, they are tried
// in turn"; Envoy's LEAST_REQUEST over all hosts): without the rotation a
// tie would send every burst to the lowest index.
type leastOutstanding struct{ n, next int }

var _ Router = (*leastOutstanding)(nil)

func newLeastOutstanding(_ Config, reps []Replica, _ seed.Rand) Router {
	return &leastOutstanding{n: len(reps)}
}

func (r *leastOutstanding) Route(_ *Request, st *State) Decision {
	best := -1
	for k := range r.n {
		i := (r.next + k) % r.n
		if best < 0 || st.Loads[i].InFlight < st.Loads[best].InFlight {
			best = i
		}
	}
	r.next = (best + 1) % r.n
	return Decision{best, ReasonLeastLoaded}
}

// powerOfTwo samples two distinct replicas and keeps the one with fewer
// requests in flight, the first sampled among equals: Mitzenmacher's
// "power of two choices", as Envoy's LEAST_REQUEST (choice_count 2) and
// SGLang's power_of_two policy do.
type powerOfTwo struct {
	n   int
	rnd seed.Rand
}

var _ Router = (*powerOfTwo)(nil)

func newPowerOfTwo(_ Config, reps []Replica, rnd seed.Rand) Router {
	return &powerOfTwo{n: len(reps), rnd: rnd}
}

func (r *powerOfTwo) Route(_ *Request, st *State) Decision {
	if r.n == 1 {
		return Decision{0, ReasonLeastLoaded}
	}
	a := r.rnd.IntN(r.n)
	b := r.rnd.IntN(r.n - 1)
	if b >= a {
		b++
	}
	if st.Loads[b].InFlight < st.Loads[a].InFlight {
		a = b
	}
	return Decision{a, ReasonLeastLoaded}
}

// leastKV sends a request to the replica reporting the lowest KV-cache
// utilisation (vLLM production stack's and llm-d's kv-cache-utilization
// signal used alone); fewer requests in flight, then the lower index,
// break ties. With stale snapshots every request between two snapshots
// sees the same utilisations and herds onto one replica.
type leastKV struct{}

var _ Router = leastKV{}

func newLeastKV(Config, []Replica, seed.Rand) Router { return leastKV{} }

func (leastKV) Route(_ *Request, st *State) Decision {
	best := 0
	for i := 1; i < len(st.Loads); i++ {
		l, b := st.Loads[i], st.Loads[best]
		if l.KVUtilization < b.KVUtilization || (l.KVUtilization == b.KVUtilization && l.InFlight < b.InFlight) {
			best = i
		}
	}
	return Decision{best, ReasonLeastLoaded}
}
