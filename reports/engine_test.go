package reports_test

// The engine's behaviour as its reported metrics see it: speculative
// decoding against theory, the prefix cache's properties, a closed loop
// against Little's law. They sit here, above the engine, because they read
// the metric definitions (reports.Summarize); nothing under sim/ imports
// reports.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

// replay builds an engine over hand-made requests; IDs are their indices.
func replay(t testing.TB, cfg sim.Config, reqs ...workloads.Request) *sim.Engine {
	t.Helper()
	for i := range reqs {
		reqs[i].ID = i
	}
	s, err := cfg.Resolve()
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	e, err := sim.NewFromSetup(s, &workloads.Slice{Requests: reqs})
	if err != nil {
		t.Fatalf("NewFromSetup: %v", err)
	}
	return e
}

// linearConfig is the default configuration on a linear step model of c0
// µs per step and c1 µs per prefill token, with no front end.
func linearConfig(c0, c1 float64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear = cost.LinearConfig{C0US: c0, C1USPerPrefillToken: c1}
	cfg.Server = sim.ServerConfig{}
	return cfg
}

func specConfig(method, acceptance string, k int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.SpecDecode.Method, cfg.SpecDecode.K = method, k
	if err := cfg.SpecDecode.Acceptance.UnmarshalText([]byte(acceptance)); err != nil {
		panic(err)
	}
	return cfg
}

// TestSpecSpeedupMatchesTheory runs one long stream alone (a batch of one)
// with a step whose cost does not depend on the tokens it verifies, and a
// proposer costing c of a target step per draft token: the TPOT speed-up
// must be E/(k·c + 1), E = (1 − α^(k+1))/(1 − α), within the sampling error
// of E over the run's verify steps.
func TestSpecSpeedupMatchesTheory(t *testing.T) {
	const (
		alpha  = 0.8
		k      = 4
		c      = 0.05
		c0US   = 10000.0
		output = 20000
	)
	run := func(cfg sim.Config) reports.Summary {
		cfg.Cost.Model = "linear"
		cfg.Cost.Linear = cost.LinearConfig{C0US: c0US}
		e := replay(t, cfg, workloads.Request{InputTokens: 100, OutputTokens: output, Seed: 12345})
		return reports.Summarize(e.Run(), cfg.Metrics)
	}
	base := run(sim.DefaultConfig())
	cfg := specConfig("eagle", "iid:0.8", k)
	cfg.SpecDecode.ProposerUS = c * c0US
	spec := run(cfg)

	E := specdecode.ExpectedTokens(alpha, k)
	want := E / (k*c + 1)
	got := base.TPOT.Mean / spec.TPOT.Mean
	// Standard error of the mean tokens per step over the verify steps.
	var m1, m2 float64
	for j := range k {
		p := math.Pow(alpha, float64(j)) * (1 - alpha)
		m1 += p * float64(j+1)
		m2 += p * float64((j+1)*(j+1))
	}
	m1 += math.Pow(alpha, k) * (k + 1)
	m2 += math.Pow(alpha, k) * (k + 1) * (k + 1)
	steps := float64(spec.Spec.VerifySteps)
	relSE := math.Sqrt(m2-m1*m1) / E / math.Sqrt(steps)
	t.Logf("speed-up %.4f, E/(kc+1) %.4f, mean acceptance length %.4f vs E %.4f over %.0f verify steps", got, want, spec.Spec.MeanAcceptanceLength, E, steps)
	if math.Abs(got/want-1) > 4*relSE+0.002 {
		t.Errorf("speed-up %.4f, want E/(kc+1) = %.4f ± %.2f%% (%.0f verify steps)", got, want, 400*relSE, steps)
	}
	if d := spec.Spec.MeanAcceptanceLength - E; math.Abs(d) > 4*relSE*E+0.002 {
		t.Errorf("mean acceptance length %.4f, want %.4f", spec.Spec.MeanAcceptanceLength, E)
	}
	if ar := spec.Spec.AcceptanceRate; math.Abs(ar-(E-1)/k) > 0.02 {
		t.Errorf("acceptance rate %.4f, want (E−1)/k = %.4f", ar, (E-1)/k)
	}
	// The configured α is accepted over verified drafts, at any k.
	if a := spec.Spec.AcceptancePerVerifiedDraft; math.Abs(a-alpha) > 0.02 {
		t.Errorf("acceptance per verified draft %.4f, want the configured α = %.2f", a, alpha)
	}
	if base.Spec != nil || spec.Spec == nil {
		t.Errorf("summary.spec: %v without speculation, %v with it", base.Spec, spec.Spec)
	}
	// Position 0 is accepted with probability α, position j only after all before it.
	for j, r := range spec.Spec.AcceptedByPosition {
		if w := math.Pow(alpha, float64(j+1)); math.Abs(r-w) > 0.02 {
			t.Errorf("position %d accepted %.3f of drafts, want α^%d = %.3f", j, r, j+1, w)
		}
	}
}

// The figure reported as α is the configured α for every acceptance level
// and draft length, while vLLM's accepted/drafted rate falls with k, as
// (E−1)/k.
func TestSpecReportsConfiguredAlpha(t *testing.T) {
	for _, alpha := range []float64{0.3, 0.8} {
		for _, k := range []int{1, 4} {
			cfg := specConfig("eagle", "iid:"+strconvF(alpha), k)
			e := replay(t, cfg, workloads.Request{InputTokens: 100, OutputTokens: 8000, Seed: 7})
			sp := reports.Summarize(e.Run(), cfg.Metrics).Spec
			if math.Abs(sp.AcceptancePerVerifiedDraft-alpha) > 0.03 {
				t.Errorf("iid:%g k=%d: acceptance per verified draft %.3f, want %g", alpha, k, sp.AcceptancePerVerifiedDraft, alpha)
			}
			if want := (specdecode.ExpectedTokens(alpha, k) - 1) / float64(k); math.Abs(sp.AcceptanceRate-want) > 0.03 {
				t.Errorf("iid:%g k=%d: acceptance rate %.3f, want (E−1)/k = %.3f", alpha, k, sp.AcceptanceRate, want)
			}
		}
	}
}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestSpecAttributionNamesRejections: with acceptance 0, every draft is
// wasted, and the stall table must name spec-rejection; the per-token view
// equals the per-chunk view when each chunk is one token.
func TestSpecAttributionNamesRejections(t *testing.T) {
	cfg := specConfig("draft-model", "iid:0", 4)
	cfg.SpecDecode.DraftModel = "llama-3.2-1b"
	cfg.Workload.Requests = 50
	cfg.Metrics.StallThresholdMS = 1 // every gap is a stall
	res, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := reports.Summarize(res.Run(), cfg.Metrics)
	if s.StallMSByCause["spec-rejection"] <= 0 || s.StallStreamsByCause["spec-rejection"] < 0.99 {
		t.Errorf("spec-rejection %.1f ms over %.0f%% of streams; want > 0 over all", s.StallMSByCause["spec-rejection"], 100*s.StallStreamsByCause["spec-rejection"])
	}
	if s.Spec.AcceptanceRate != 0 || s.Spec.MeanAcceptanceLength != 1 {
		t.Errorf("acceptance %v, mean length %v; want 0 and 1", s.Spec.AcceptanceRate, s.Spec.MeanAcceptanceLength)
	}
	if !reflect.DeepEqual(s.ITLPerToken, s.ITLPooled) {
		t.Errorf("one token per chunk, yet per-token ITL %+v differs from pooled %+v", s.ITLPerToken, s.ITLPooled)
	}
}

// TestSpecDeterministic: a run repeated with the same configuration
// accepts the same drafts.
func TestSpecDeterministic(t *testing.T) {
	cfg := specConfig("ngram", "beta:4,2", 4)
	cfg.Workload.Requests = 200
	a, _ := sim.New(cfg)
	b, _ := sim.New(cfg)
	ra, rb := a.Run(), b.Run()
	if reports.Summarize(ra, cfg.Metrics).Spec.Accepted != reports.Summarize(rb, cfg.Metrics).Spec.Accepted {
		t.Fatal("same config, different acceptances")
	}
}

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

// TestClosedLoop: with N users thinking Z seconds between requests, the
// throughput X obeys Little's law, N = X·(Z + R), R the mean time in the
// system (E2EL); more users than the server can take saturate it; and
// every request ends.
func TestClosedLoop(t *testing.T) {
	run := func(users int, think float64) reports.Summary {
		cfg := sim.DefaultConfig()
		cfg.Workload.Arrival = "closed"
		cfg.Workload.Users = users
		cfg.Workload.ThinkS = think
		cfg.Workload.Requests = 3000
		e, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for e.Step() {
			if err := e.Check(); err != nil {
				t.Fatal(err)
			}
			if n := e.Replica().Active(); n > users {
				t.Fatalf("%d requests in the system with %d users", n, users)
			}
		}
		s := reports.Summarize(e.Result(), cfg.Metrics)
		if s.Finished+s.Rejected != 3000 {
			t.Fatalf("%d finished + %d rejected of 3000", s.Finished, s.Rejected)
		}
		return s
	}
	for _, c := range []struct {
		users int
		think float64
	}{{8, 2}, {32, 1}, {64, 0.5}} {
		s := run(c.users, c.think)
		little := s.RequestsPerS * (c.think + s.E2EL.Mean/1000)
		if math.Abs(little/float64(c.users)-1) > 0.05 {
			t.Errorf("%d users, %g s think: X·(Z+R) = %.2f × (%.2f + %.2f) = %.2f, want %d ± 5 %%",
				c.users, c.think, s.RequestsPerS, c.think, s.E2EL.Mean/1000, little, c.users)
		}
	}
	few, many := run(16, 0), run(512, 0)
	if many.RequestsPerS < 1.5*few.RequestsPerS || many.TTFT.Mean < 5*few.TTFT.Mean {
		t.Errorf("512 users: %.1f req/s, TTFT %.0f ms; 16 users: %.1f req/s, TTFT %.0f ms; want more throughput and much longer queues",
			many.RequestsPerS, many.TTFT.Mean, few.RequestsPerS, few.TTFT.Mean)
	}
}
