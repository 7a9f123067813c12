package sim_test

import (
	"fmt"
	"github.com/itlsim/itlsim/kvcache"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/workloads"
)

// prefixRequests builds requests whose prompts share prefixes: each draws a
// conversation and continues its chain of unit ids, so later requests of a
// conversation repeat the earlier ones' ids.
func prefixRequests(r *rand.Rand, n, unit int) []workloads.Request {
	convs := make([][]uint64, 1+r.IntN(6))
	next := uint64(1)
	reqs := make([]workloads.Request, n)
	at := int64(0)
	for i := range reqs {
		c := r.IntN(len(convs))
		units := len(convs[c]) + 1 + r.IntN(3)
		for len(convs[c]) < units {
			convs[c] = append(convs[c], next)
			next++
		}
		prompt := (units-1)*unit + 1 + r.IntN(unit) // the last unit partial
		at += int64(r.ExpFloat64() * 2e8)
		reqs[i] = workloads.Request{ID: i, Arrival: at, InputTokens: prompt, OutputTokens: 1 + r.IntN(40),
			PrefixBlocks: append([]uint64(nil), convs[c][:units]...), PrefixBlockTokens: unit, Seed: uint64(i)}
	}
	return reqs
}

// TestPrefixCacheProperties drives random shared-prefix workloads through
// small caches under every policy and preemption mode: blocks are never
// over-allocated or leaked (Check after every event), every request
// finishes, and caching finds prefixes.
func TestPrefixCacheProperties(t *testing.T) {
	policies := []string{"chunked", "prefill-first", "orca", "static"}
	var tierHits, pauses int64
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 99))
		cfg := linearConfig(1000, 5)
		cfg.Scheduler.Policy = policies[r.IntN(len(policies))]
		cfg.Scheduler.Preemption = []string{"recompute", "swap", "pause"}[r.IntN(3)]
		cfg.Scheduler.MaxNumBatchedTokens = 64 + r.IntN(512)
		cfg.KVCache.NumGPUBlocks = 40 + r.IntN(200)
		cfg.KVCache.SwapSpaceGiB = 0.01
		ntiers := r.IntN(3)
		if ntiers > 0 {
			cfg.KVCache.Tiers = []kvcache.Tier{{Name: "cpu", CapacityGiB: 0.01, ReadGBps: 20, WriteGBps: 20}}
		}
		if ntiers > 1 {
			cfg.KVCache.Tiers = append(cfg.KVCache.Tiers, kvcache.Tier{Name: "ssd", CapacityGiB: 0.05, ReadGBps: 5, WriteGBps: 2})
		}
		unit := 16 * (1 + r.IntN(4))
		reqs := prefixRequests(r, 20+r.IntN(60), unit)
		name := fmt.Sprintf("seed=%d,%s,%s,blocks=%d,unit=%d,tiers=%d", seed, cfg.Scheduler.Policy, cfg.Scheduler.Preemption, cfg.KVCache.NumGPUBlocks, unit, ntiers)
		t.Run(name, func(t *testing.T) {
			e := replay(t, cfg, reqs...)
			for e.Step() {
				if err := e.Check(); err != nil {
					t.Fatalf("at %d ns: %v", e.Now(), err)
				}
			}
			res := e.Result()
			if res.Finished+res.RejectedTotal() != len(reqs) {
				t.Fatalf("%d finished + %d rejected of %d", res.Finished, res.RejectedTotal(), len(reqs))
			}
			s := reports.Summarize(res, cfg.Metrics)
			if s.PrefixCacheQueried == 0 || s.PrefixCacheHits > s.PrefixCacheQueried {
				t.Errorf("prefix lookups: %d hits of %d tokens", s.PrefixCacheHits, s.PrefixCacheQueried)
			}
			var sum float64
			for _, tr := range s.PrefixCacheTiers {
				sum += tr.HitRate
				if tr.Name != "gpu" {
					tierHits += tr.HitTokens
				}
			}
			if len(s.PrefixCacheTiers) > 0 && math.Abs(sum-s.PrefixCacheHitRate) > 1e-9 {
				t.Errorf("hit rates by tier sum to %g, the prefix cache's is %g", sum, s.PrefixCacheHitRate)
			}
			pauses += int64(res.PreemptPause)
		})
	}
	if tierHits == 0 || pauses == 0 {
		t.Errorf("over the seeds the offload tiers found %d tokens and %d streams paused: the draws no longer exercise them", tierHits, pauses)
	}
	// Same requests with caching off find nothing and compute every token.
	r := rand.New(rand.NewPCG(1, 99))
	reqs := prefixRequests(r, 60, 32)
	on, off := linearConfig(1000, 5), linearConfig(1000, 5)
	off.KVCache.EnablePrefixCaching = false
	son := reports.Summarize(replay(t, on, reqs...).Run(), on.Metrics)
	soff := reports.Summarize(replay(t, off, reqs...).Run(), off.Metrics)
	if soff.PrefixCacheHitRate != 0 || son.PrefixCacheHitRate < 0.3 {
		t.Errorf("hit rate %.3f with caching, %.3f without; want > 0.3 and 0", son.PrefixCacheHitRate, soff.PrefixCacheHitRate)
	}
	if son.TTFT.Mean >= soff.TTFT.Mean {
		t.Errorf("mean TTFT %.2f ms with caching, %.2f without; want lower with it", son.TTFT.Mean, soff.TTFT.Mean)
	}
}
