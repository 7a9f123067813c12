package sim_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/kvlink"
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
	switch {
	case raceEnabled: // 5–10× slower
		seeds = 4
	case testing.Short():
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
	var handedOff, received int
	for _, rep := range reps {
		s := rep.Server
		switch rep.Role {
		case sim.RoleDecode:
			// Its requests come over the KV link: each one the decode
			// router sent it, counted once (on its prefill replica) in
			// the cluster's requests, and each ends here.
			if s.Requests != 0 || rep.Received != rep.Routed || rep.HandedOff != 0 {
				t.Errorf("%s: %d requests, %d received, %d routed, %d handed off; want 0, routed, routed, 0", rep.Name, s.Requests, rep.Received, rep.Routed, rep.HandedOff)
			}
			if s.Finished+s.Cancelled+s.RejectedTotal() != rep.Received {
				t.Errorf("%s: %d finished + %d cancelled + %d rejected != %d received", rep.Name, s.Finished, s.Cancelled, s.RejectedTotal(), rep.Received)
			}
		case sim.RolePrefill:
			// Every request it admitted is prefilled and handed off, or rejected.
			routed += rep.Routed
			if s.Requests != rep.Routed || s.Finished != 0 || rep.Received != 0 {
				t.Errorf("%s: %d requests, %d routed, %d finished, %d received; want routed, routed, 0, 0", rep.Name, s.Requests, rep.Routed, s.Finished, rep.Received)
			}
			if rep.HandedOff+s.RejectedTotal() != s.Requests || s.OutputTokens != 0 {
				t.Errorf("%s: %d handed off + %d rejected != %d requests (or %d tokens out)", rep.Name, rep.HandedOff, s.RejectedTotal(), s.Requests, s.OutputTokens)
			}
		default:
			routed += rep.Routed
			if s.Requests != rep.Routed {
				t.Errorf("%s: %d requests arrived, %d routed to it", rep.Name, s.Requests, rep.Routed)
			}
			if s.Finished+s.Cancelled+s.RejectedTotal() != s.Requests {
				t.Errorf("%s: %d finished + %d cancelled + %d rejected != %d requests", rep.Name, s.Finished, s.Cancelled, s.RejectedTotal(), s.Requests)
			}
		}
		handedOff += rep.HandedOff
		received += rep.Received
		if rep.BusyShare < 0 || rep.BusyShare > 1 || rep.KVUtilizationMean < 0 || rep.KVUtilizationMean > 1 {
			t.Errorf("%s: busy %g, KV mean %g outside [0,1]", rep.Name, rep.BusyShare, rep.KVUtilizationMean)
		}
		c := rep.Result
		requests += c.Requests
		finished += c.Finished
		rejected += c.RejectedTotal()
		cancelled += c.Cancelled
		streams += c.Streams.Len()
		out += c.OutputTokens
		blocks += c.KVBlocks
	}
	if routed != r.Requests || requests != r.Requests || finished != r.Finished || rejected != r.RejectedTotal() ||
		cancelled != r.Cancelled || streams != r.Streams.Len() || out != r.OutputTokens || blocks != r.KVBlocks {
		t.Errorf("replicas sum to routed %d, requests %d, finished %d, rejected %d, cancelled %d, streams %d, tokens %d, blocks %d; the cluster has %d, %d, %d, %d, %d, %d, %d, %d",
			routed, requests, finished, rejected, cancelled, streams, out, blocks,
			r.Requests, r.Requests, r.Finished, r.RejectedTotal(), r.Cancelled, r.Streams.Len(), r.OutputTokens, r.KVBlocks)
	}
	checkTransfers(t, e, handedOff, received)
}

// checkTransfers checks a disaggregated run's transfers against the
// replicas' handoffs: every request a prefill replica handed off crossed
// the link once and landed on a decode replica, and the pools' shares add
// up to the replicas'.
func checkTransfers(t *testing.T, e *sim.Engine, handedOff, received int) {
	t.Helper()
	tr := e.Transfers()
	if tr == nil {
		if handedOff != 0 || received != 0 {
			t.Errorf("%d handed off, %d received without prefill and decode pools", handedOff, received)
		}
		return
	}
	if tr.Count != int64(handedOff) || handedOff != received || tr.Violations != 0 {
		t.Errorf("%d transfers, %d handed off, %d received, %d started before their prefill ended", tr.Count, handedOff, received, tr.Violations)
	}
	if tr.Time.N != uint64(tr.Count) || (tr.Count > 0 && float64(tr.Time.Min) < tr.Link.LatencyUS*1e3-1) {
		t.Errorf("%d transfer times for %d transfers; the quickest %d ns, under the link's latency %g µs", tr.Time.N, tr.Count, tr.Time.Min, tr.Link.LatencyUS)
	}
	var h, rc, routed int
	for _, p := range e.PoolReports() {
		h += p.HandedOff
		rc += p.Received
		routed += p.Routed
		if p.Role == sim.RoleDecode && p.Server.Requests != p.Received {
			t.Errorf("pool %s: %d requests, %d received", p.Name, p.Server.Requests, p.Received)
		}
	}
	if h != handedOff || rc != received {
		t.Errorf("pools hand off %d and receive %d; replicas %d and %d", h, rc, handedOff, received)
	}
}

// randomDisagg is a random scenario on a cluster of prefill and decode
// pools (2–12 replicas, sometimes of different GPUs), behind any prefill
// and decode routers, over any link, sometimes layer by layer.
func randomDisagg(seed uint64) (sim.Config, string) {
	cfg, desc := randomScenario(seed)
	r := rand.New(rand.NewPCG(seed, 0xd15a))
	cl := &cfg.Cluster
	names := router.Names()
	cl.Router.Policy = names[r.IntN(len(names))]
	cl.DecodeRouter.Policy = names[r.IntN(len(names))]
	presets := kvlink.Presets()
	cl.KVLink.Preset = presets[r.IntN(len(presets))]
	if r.IntN(3) == 0 {
		cl.KVLink.Gbps = 1 + r.Float64()*50 // a slow link: transfers queue
	}
	cl.KVLink.Layerwise = r.IntN(2) == 0
	n := 2 + r.IntN(11)
	a := 1 + r.IntN(n-1)
	dgpu := []string{"h100-sxm-80gb", "a100-80gb"}[r.IntN(2)]
	cl.Pools = []sim.PoolConfig{
		{Name: "prefill", Replicas: a, Role: sim.RolePrefill},
		{Name: "decode", Replicas: n - a, GPU: dgpu, Role: sim.RoleDecode},
	}
	cfg.Delivery.Failover.KeepPrimary = true // aborting primaries is not modelled with disaggregation
	cfg.Workload.Requests = 20 + r.IntN(131)
	return cfg, fmt.Sprintf("%s,prefill=%d,decode=%d(%s),router=%s/%s,link=%s/%g/%v", desc, a, n-a, dgpu,
		cl.Router.Policy, cl.DecodeRouter.Policy, cl.KVLink.Preset, cl.KVLink.Gbps, cl.KVLink.Layerwise)
}

// TestDisaggProperties checks every invariant of TestProperties on random
// disaggregated clusters, plus conservation across pools: each request is
// routed once to a prefill replica, handed off once, lands once on a
// decode replica and ends there (or is rejected where it was refused),
// every gap's parts sum to it (the engine panics if not), no transfer
// starts before its prefill ends, and every KV block is freed.
func TestDisaggProperties(t *testing.T) {
	seeds := clusterSeeds
	switch {
	case raceEnabled: // 5–10× slower
		seeds = 4
	case testing.Short():
		seeds = 20
	}
	for seed := range uint64(seeds) {
		cfg, desc := randomDisagg(seed + 3000)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			checkProperties(t, cfg)
		})
	}
}

// TestDisaggDeterministic: the same disaggregated scenario twice gives the
// same result, replica by replica and pool by pool.
func TestDisaggDeterministic(t *testing.T) {
	for seed := range uint64(4) {
		cfg, desc := randomDisagg(seed + 4000)
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			a, b := runEngine(t, cfg), runEngine(t, cfg)
			if !reflect.DeepEqual(a.Result(), b.Result()) || !reflect.DeepEqual(a.PoolReports(), b.PoolReports()) || !reflect.DeepEqual(a.Transfers(), b.Transfers()) {
				t.Error("two runs of one disaggregated scenario differ")
			}
		})
	}
}

// TestOneReplicaClusterIsThePlainRun: a cluster of one replica, whatever
// its router, gives exactly the result of the same scenario without one.
func TestOneReplicaClusterIsThePlainRun(t *testing.T) {
	seeds := uint64(8)
	if raceEnabled { // 5–10× slower
		seeds = 2
	}
	for seed := range seeds {
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

// disaggPair is a small disaggregated run: one prefill and one decode
// replica of the default model, prompts of 4,000 tokens over link.
func disaggPair(link kvlink.Config) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = 60
	cfg.Workload.Rate = 2
	cfg.Workload.InputLen = workloads.MustParseDist("fixed:4000")
	cfg.Workload.OutputLen = workloads.MustParseDist("fixed:64")
	cfg.Metrics.StallThresholdMS = 0.001 // every gap is a stall: the table's split is every gap's
	cfg.Cluster.Replicas = 2
	cfg.Cluster.PrefillDecode = "1:1"
	cfg.Cluster.KVLink = link
	return cfg
}

// TestDisaggTransferTimes: a transfer takes bytes / bandwidth + latency
// (4,000 tokens of Llama-3.1-8B's 128 KiB over 10 Gb/s and 1 ms: 420 ms),
// which TTFT includes; layer by layer it overlaps the prefill's last step
// and lands sooner; and the handoff on the decode side shows as
// kv-transfer in the first gaps.
func TestDisaggTransferTimes(t *testing.T) {
	slow := kvlink.Config{Preset: "tcp", Gbps: 10, LatencyUS: 1000}
	e := runEngine(t, disaggPair(slow))
	tr := e.Transfers()
	bytes := int64(4000) * e.Setup().Pools[0].Setup.Model.KVBytesPerToken()
	wire := float64(bytes) * 8 / 10e9 * 1e9
	if tr.Count != 60 || tr.Bytes != 60*bytes || float64(tr.Time.Min) < wire+1e6-1 || float64(tr.Time.Min) > (wire+1e6)*1.01 {
		t.Errorf("%d transfers of %d bytes, the quickest %d ns; want 60 of %d bytes, the quickest %.0f ns", tr.Count, tr.Bytes, tr.Time.Min, bytes, wire+1e6)
	}
	r := e.Result()
	if r.StallTime[sim.CauseKVTransfer] <= 0 || r.StallTime[sim.CausePrefillInterference] != 0 {
		t.Errorf("kv-transfer %d ns, prefill-interference %d ns of the gaps; want some handoff and no interference", r.StallTime[sim.CauseKVTransfer], r.StallTime[sim.CausePrefillInterference])
	}
	for _, s := range r.Streams.All() {
		if s.TTFT < sim.Time(wire)+1e6 {
			t.Fatalf("request %d: TTFT %d ns, shorter than its transfer %.0f ns", s.ID, s.TTFT, wire+1e6)
		}
	}
	slow.Layerwise = true
	lw := runEngine(t, disaggPair(slow))
	ttft := func(r *sim.Result) (sum sim.Time) {
		for _, s := range r.Streams.All() {
			sum += s.TTFT
		}
		return sum
	}
	if lt := lw.Transfers(); lt.Time.Mean() >= tr.Time.Mean() || ttft(lw.Result()) >= ttft(r) {
		t.Errorf("layerwise: transfer mean %.0f ns, Σ TTFT %d; whole: %.0f, %d: want both lower", lt.Time.Mean(), ttft(lw.Result()), tr.Time.Mean(), ttft(r))
	}
}

// TestClusterSeriesHoldsEveryGap: a cluster's replicas record ITL over
// time and by position into the engine's one set (no report reads a
// replica's); merged into the cluster's result, the time series and the
// positions hold every gap the pooled histogram holds, once, also after
// the series halved its buckets (a run longer than 1,024 intervals).
func TestClusterSeriesHoldsEveryGap(t *testing.T) {
	long := sim.DefaultConfig()
	long.Workload.Rate, long.Workload.Requests = 1.2, 2600
	long.Cluster.Replicas = 3
	long.Cluster.Router.Policy = "least-outstanding"
	cfgs := []sim.Config{long}
	for seed := range uint64(6) {
		cfg, _ := randomCluster(seed + 9100)
		cfg.Delivery = sim.DefaultConfig().Delivery // the server's view is the run's
		cfgs = append(cfgs, cfg)
	}
	for i, cfg := range cfgs {
		e := runEngine(t, cfg)
		r := e.Result()
		var n uint64
		var sum float64
		for _, b := range r.Series.Buckets {
			n += b.ITL.N
			sum += b.ITL.Sum
		}
		var pn uint64
		for _, h := range r.Position {
			pn += h.N
		}
		if n != r.Pooled.N || sum != r.Pooled.Sum || pn != r.Pooled.N {
			t.Errorf("config %d (%d replicas): the series holds %d gaps summing to %g ns and the positions %d; the pooled histogram %d summing to %g",
				i, len(e.Replicas()), n, sum, pn, r.Pooled.N, r.Pooled.Sum)
		}
		if i == 0 && r.Series.Interval <= sim.FromMS(1000) {
			t.Errorf("the long run's series kept its %v interval: it never halved", r.Series.Interval)
		}
		for _, rep := range e.Replicas() {
			if b := rep.Result().Series.Buckets; len(b) > 0 && b[0].ITL != nil {
				t.Errorf("config %d: replica %s keeps ITL histograms of its own", i, rep.Name())
				break
			}
		}
	}
}
