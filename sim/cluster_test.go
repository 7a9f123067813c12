package sim_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// clusterSeeds is how many random clusters TestClusterProperties runs.
const clusterSeeds = 60

// randomCluster is a random scenario (randomScenario: any policy, cramped
// caches, preemption, delivery, speculation) put on 1–16 replicas behind
// any router with any snapshot age, sometimes as two pools of different
// GPUs.
func randomCluster(seed uint64) (sim.Config, string) {
	cfg, desc := randomScenario(seed)
	r := rand.New(rand.NewPCG(seed, 0xc1))
	cl := &cfg.Cluster
	names := router.Names()
	cl.Router.Policy = names[r.IntN(len(names))]
	cl.Router.StalenessMS = []float64{-1, 0, 5, 100, 500}[r.IntN(5)]
	n := 1 + r.IntN(16)
	if r.IntN(4) == 0 && n > 1 {
		a := 1 + r.IntN(n-1)
		cl.Pools = []sim.PoolConfig{
			{Name: "h100", Replicas: a, GPU: "h100-sxm-80gb"},
			{Name: "a100", Replicas: n - a, GPU: "a100-80gb"},
		}
	} else {
		cl.Replicas = n
	}
	cfg.Workload.Requests = 20 + r.IntN(131)
	return cfg, fmt.Sprintf("%s,replicas=%d,pools=%d,router=%s,staleness=%g", desc, n, len(cl.Pools), cl.Router.Policy, cl.Router.StalenessMS)
}

// TestClusterProperties checks every invariant of TestProperties on
// random clusters, plus conservation per replica: each request is routed
// once and ends once on its replica, and the replicas' results add up to
// the cluster's.
func TestClusterProperties(t *testing.T) {
	seeds := clusterSeeds
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		cfg, desc := randomCluster(seed + 1000)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			checkProperties(t, cfg)
		})
	}
}

// checkReplicas checks that the replicas' shares add up to the run: every
// request routed once, each replica's requests ending on it, and the
// cluster result the sum of the replicas'.
func checkReplicas(t *testing.T, e *sim.Engine, r *sim.Result) {
	t.Helper()
	reps := e.ReplicaReports()
	if len(reps) != len(e.Replicas()) {
		t.Fatalf("%d replica reports for %d replicas", len(reps), len(e.Replicas()))
	}
	var routed, requests, finished, rejected, cancelled, streams int
	var out int64
	var blocks int
	for _, rep := range reps {
		s := rep.Server
		routed += rep.Routed
		if s.Requests != rep.Routed {
			t.Errorf("%s: %d requests arrived, %d routed to it", rep.Name, s.Requests, rep.Routed)
		}
		if s.Finished+s.Cancelled+s.RejectedTotal() != s.Requests {
			t.Errorf("%s: %d finished + %d cancelled + %d rejected != %d requests", rep.Name, s.Finished, s.Cancelled, s.RejectedTotal(), s.Requests)
		}
		if rep.BusyShare < 0 || rep.BusyShare > 1 || rep.KVUtilizationMean < 0 || rep.KVUtilizationMean > 1 {
			t.Errorf("%s: busy %g, KV mean %g outside [0,1]", rep.Name, rep.BusyShare, rep.KVUtilizationMean)
		}
		c := rep.Result
		requests += c.Requests
		finished += c.Finished
		rejected += c.RejectedTotal()
		cancelled += c.Cancelled
		streams += len(c.Streams)
		out += c.OutputTokens
		blocks += c.KVBlocks
	}
	if routed != r.Requests || requests != r.Requests || finished != r.Finished || rejected != r.RejectedTotal() ||
		cancelled != r.Cancelled || streams != len(r.Streams) || out != r.OutputTokens || blocks != r.KVBlocks {
		t.Errorf("replicas sum to routed %d, requests %d, finished %d, rejected %d, cancelled %d, streams %d, tokens %d, blocks %d; the cluster has %d, %d, %d, %d, %d, %d, %d, %d",
			routed, requests, finished, rejected, cancelled, streams, out, blocks,
			r.Requests, r.Requests, r.Finished, r.RejectedTotal(), r.Cancelled, len(r.Streams), r.OutputTokens, r.KVBlocks)
	}
}

// TestOneReplicaClusterIsThePlainRun: a cluster of one replica, whatever
// its router, gives exactly the result of the same scenario without one.
func TestOneReplicaClusterIsThePlainRun(t *testing.T) {
	for seed := range uint64(8) {
		cfg, desc := randomScenario(seed + 500)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			plain := runConfig(t, cfg)
			for _, name := range router.Names() {
				c := cfg
				c.Cluster.Replicas = 1
				c.Cluster.Router.Policy = name
				c.Cluster.Router.StalenessMS = 100
				if got := runConfig(t, c); !reflect.DeepEqual(got, plain) {
					t.Errorf("router %s: a one-replica cluster differs from the plain run", name)
				}
			}
		})
	}
}

// TestClusterDeterministic: the same cluster scenario twice gives the same
// result, replica by replica.
func TestClusterDeterministic(t *testing.T) {
	for seed := range uint64(6) {
		cfg, desc := randomCluster(seed + 2000)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			a, b := runEngine(t, cfg), runEngine(t, cfg)
			if !reflect.DeepEqual(a.Result(), b.Result()) || !reflect.DeepEqual(a.ReplicaReports(), b.ReplicaReports()) {
				t.Error("two runs of one cluster scenario differ")
			}
		})
	}
}

func runEngine(t *testing.T, cfg sim.Config) *sim.Engine {
	t.Helper()
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Run()
	return e
}

func runConfig(t *testing.T, cfg sim.Config) *sim.Result {
	t.Helper()
	return runEngine(t, cfg).Result()
}

// TestRoutersSpreadLoad: on 4 identical replicas every router sends each
// replica a share of a long run, and the load-aware ones keep the
// in-flight imbalance lower than random routing does.
func TestRoutersSpreadLoad(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = 2000
	cfg.Workload.Rate = 4 * sim.DefaultRate
	cfg.Workload.OutputLen = workloads.MustParseDist("pareto:20,1.5,4000")
	cfg.Cluster.Replicas = 4
	for _, name := range router.Names() {
		c := cfg
		c.Cluster.Router.Policy = name
		e := runEngine(t, c)
		for _, rep := range e.ReplicaReports() {
			if rep.Routed < 100 {
				t.Errorf("%s: %s was sent %d of 2000 requests", name, rep.Name, rep.Routed)
			}
		}
	}
}
