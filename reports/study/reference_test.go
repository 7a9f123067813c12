package study_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// referenceSeeds is how many random scenarios TestReferencePath runs both
// ways.
const referenceSeeds = 48

// referenceScenario is a small random scenario that reaches the engine's
// specialised paths and their exits: clusters behind every router, prefill
// and decode pools, speculative decoding, delivery paths and the
// watchdog, preemption under KV pressure (recompute, swap, pause, offload
// tiers), prefix caching with shared prefixes and conversations, chunked
// prefill and the other batchers, classes, noise and hiccups.
func referenceScenario(seed uint64) (sim.Config, string) {
	r := rand.New(rand.NewPCG(seed, 0x5ef))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	sc := &cfg.Scheduler
	sc.Policy = pick(scheduler.ChunkedName, scheduler.ChunkedName, scheduler.ChunkedName, scheduler.OrcaName, scheduler.PrefillFirstName, scheduler.StaticName)
	sc.Preemption = pick("recompute", "swap", "pause")
	if r.IntN(2) == 0 {
		sc.MaxNumSeqs = 4 + r.IntN(60)
	}
	if r.IntN(3) == 0 {
		sc.LongPrefillTokenThreshold = 16 + r.IntN(256)
	}
	kv := &cfg.KVCache
	kv.BlockSize = []int{4, 16, 16, 32}[r.IntN(4)]
	sc.MaxNumBatchedTokens = max(kv.BlockSize, 64+r.IntN(2048))
	kv.EnablePrefixCaching = r.IntN(4) != 0
	kv.SwapSpaceGiB = []float64{0, 0.01, 4}[r.IntN(3)]
	if kv.EnablePrefixCaching && r.IntN(4) == 0 {
		kv.Tiers = []kvcache.Tier{{Name: "cpu", CapacityGiB: 0.05 + r.Float64()*0.2, ReadGBps: 20, WriteGBps: 20}}
	}

	w := &cfg.Workload
	w.Requests = 30 + r.IntN(90)
	w.Rate = []float64{5, 20, 80, 300}[r.IntN(4)]
	w.Arrival = pick(workloads.ArrivalPoisson, workloads.ArrivalConstant)
	w.InputLen = workloads.MustParseDist(fmt.Sprintf("normal:%d,%d,1,1200", 32+r.IntN(400), 1+r.IntN(200)))
	w.OutputLen = workloads.MustParseDist(fmt.Sprintf("normal:%d,%d,1,400", 8+r.IntN(200), 1+r.IntN(100)))
	switch r.IntN(4) {
	case 0:
		w.SharedPrefix = workloads.SharedPrefix{Groups: 1 + r.IntN(4), Tokens: 64 + r.IntN(512), Share: 0.3 + 0.7*r.Float64()}
	case 1:
		w.Conversation = workloads.Conversation{Turns: 2 + r.IntN(3), ThinkS: r.Float64() * 2}
	}
	if r.IntN(3) == 0 {
		w.Classes = []workloads.Class{
			{Name: "chat", Share: 0.6, Priority: 1, InputLen: w.InputLen, OutputLen: w.OutputLen},
			{Name: "batch", Share: 0.4, InputLen: workloads.MustParseDist("uniform:100,900"), OutputLen: workloads.MustParseDist("uniform:1,300")},
		}
	}
	// From a cache that holds a handful of requests (preemption) to plenty.
	kv.NumGPUBlocks = []int{0, 0, 40 + r.IntN(200), 400 + r.IntN(2000)}[r.IntN(4)] * 16 / kv.BlockSize
	if kv.NumGPUBlocks > 0 {
		kv.NumGPUBlocks = max(kv.NumGPUBlocks, (1600+kv.BlockSize-1)/kv.BlockSize)
	}

	if r.IntN(2) == 0 {
		cfg.Cost.Model = "linear"
	}
	if r.IntN(2) == 0 {
		cfg.Cost.NoiseCV = 0.3 * r.Float64()
	}
	if r.IntN(4) == 0 {
		cfg.Cost.HiccupRatePerS, cfg.Cost.HiccupMS = 0.5+r.Float64()*3, 5+r.Float64()*300
	}
	cfg.Metrics.StallThresholdMS = []float64{20, 100, 250}[r.IntN(3)]
	cfg.Metrics.TimeseriesIntervalS = []float64{0.01, 1}[r.IntN(2)]
	cfg.Metrics.WorstStreams = r.IntN(6)

	if r.IntN(3) == 0 {
		sd := &cfg.SpecDecode
		sd.Method = pick("ngram", "eagle", "draft-model")
		if sd.Method == "draft-model" {
			sd.DraftModel = "llama-3.2-1b"
		}
		sd.K = 1 + r.IntN(5)
		if err := sd.Acceptance.UnmarshalText([]byte(pick("iid:0.7", "position-decay:0.9,0.8", "regime:0.9,0.2,40,20"))); err != nil {
			panic(err)
		}
		if r.IntN(3) == 0 {
			sd.DisableByBatchSize = 1 + r.IntN(8)
		}
	}

	pd := false
	switch r.IntN(3) {
	case 1:
		cl := &cfg.Cluster
		cl.Replicas = 2 + r.IntN(5)
		cl.Router.Policy = pick("round-robin", "least-outstanding", "vllm-dp", "llm-d", "sglang-cache-aware", "power-of-two")
		cl.Router.StalenessMS = []float64{-1, 0, 50}[r.IntN(3)]
		w.Rate *= float64(cl.Replicas)
	case 2:
		cl := &cfg.Cluster
		p := 1 + r.IntN(2)
		cl.Replicas = p + 1 + r.IntN(3)
		cl.PrefillDecode = fmt.Sprintf("%d:%d", p, cl.Replicas-p)
		cl.Router.Policy = pick("round-robin", "least-outstanding")
		w.Rate *= 2
		pd = true
	}

	if r.IntN(3) == 0 {
		d := &cfg.Delivery
		d.Network.Profile = pick("datacenter", "broadband", "mobile-4g", "flaky-wifi")
		if r.IntN(2) == 0 {
			d.Smoothing.CadenceMS = 10 + r.Float64()*40
		}
		if r.IntN(3) == 0 {
			d.Flush.WindowMS = 10 + r.Float64()*80
		}
		if r.IntN(3) == 0 {
			d.Failover.WatchdogMS = 200 + r.Float64()*2000
			d.Failover.KeepPrimary = pd || r.IntN(2) == 0
		}
	}
	desc := fmt.Sprintf("seed=%d,%s,%s,kv=%dx%d,prefix=%t,tiers=%d,n=%d,rate=%g,replicas=%d,pd=%q,router=%s,spec=%s,delivery=%q,classes=%d",
		seed, sc.Policy, sc.Preemption, kv.NumGPUBlocks, kv.BlockSize, kv.EnablePrefixCaching, len(kv.Tiers), w.Requests, w.Rate,
		cfg.Cluster.Replicas, cfg.Cluster.PrefillDecode, cfg.Cluster.Router.Policy, cfg.SpecDecode.Method, cfg.Delivery.Network.Profile, len(w.Classes))
	return cfg, desc
}

// referenceRun runs cfg as itlsim run --json --timelines does and returns
// the JSON document (with every stream's row) and the timelines written.
func referenceRun(t *testing.T, cfg sim.Config) (e *sim.Engine, doc, timelines []byte) {
	t.Helper()
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tl bytes.Buffer
	tw := reports.NewTimelineWriter(&tl, "run")
	res, err := study.RunScored(e, true, tw)
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	run := study.RunReport(e, "run", nil, res, true)
	var js bytes.Buffer
	if err := reports.WriteJSON(&js, reports.Document{SchemaVersion: reports.SchemaVersion, Scenario: e.Setup().Config, Runs: []reports.Run{run}}); err != nil {
		t.Fatal(err)
	}
	return e, js.Bytes(), tl.Bytes()
}

// firstDiff describes where a and b first differ, with some context.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("byte %d of %d/%d:\n specialised: …%s…\n reference:   …%s…", i, len(a), len(b),
		a[from:min(len(a), i+80)], b[from:min(len(b), i+80)])
}

// TestReferencePath is the differential test of the engine's specialised
// step against its straightforward one (sim.Config.Reference): random
// scenarios run both ways give the same JSON document, byte for byte
// (summary, every stream's row, server view, replicas, pools, series),
// and the same timelines.
func TestReferencePath(t *testing.T) {
	var tokens, specs, clusters, pools, delivered, preempted, cached int
	for seed := range uint64(referenceSeeds) {
		cfg, desc := referenceScenario(seed + 1)
		e, doc, tl := referenceRun(t, cfg)
		ref := cfg
		ref.Reference = true
		_, refDoc, refTL := referenceRun(t, ref)
		if !bytes.Equal(doc, refDoc) {
			t.Errorf("%s: the JSON documents differ at %s", desc, firstDiff(doc, refDoc))
		}
		if !bytes.Equal(tl, refTL) {
			t.Errorf("%s: the timelines differ at %s", desc, firstDiff(tl, refTL))
		}
		res, srv := e.Result(), e.ServerResult()
		tokens += int(res.OutputTokens)
		if res.Spec.Steps > 0 {
			specs++
		}
		if n := len(e.Replicas()); n > 1 && cfg.Cluster.PrefillDecode == "" {
			clusters++
		}
		if cfg.Cluster.PrefillDecode != "" {
			pools++
		}
		if res.Delivery.On {
			delivered++
		}
		if srv.PreemptRecompute+srv.PreemptSwap+srv.PreemptPause > 0 {
			preempted++
		}
		if srv.PrefixHits > 0 {
			cached++
		}
	}
	t.Logf("%d scenarios, %d tokens: %d speculate, %d clusters, %d with pools, %d with delivery, %d preempt, %d hit the prefix cache",
		referenceSeeds, tokens, specs, clusters, pools, delivered, preempted, cached)
	for what, n := range map[string]int{"speculate": specs, "are clusters": clusters, "have pools": pools,
		"have a delivery path": delivered, "preempt": preempted, "hit the prefix cache": cached} {
		if n < 3 {
			t.Errorf("only %d scenarios %s: the test hardly reaches that path", n, what)
		}
	}
}
