package study

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// small is a fast scenario: the default model and workload, 400 requests.
func small() sim.Config {
	c := sim.DefaultConfig()
	c.Workload.Requests = 400
	return c
}

func variant(t *testing.T, cfg sim.Config) scenario.Variant {
	t.Helper()
	vs, err := scenario.Expand(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

func TestMapKeepsInputOrderAndFirstError(t *testing.T) {
	for _, workers := range []int{1, 3, 16} {
		var calls []int
		got, err := Map(50, workers, func(i int) (int, error) { return i * i, nil }, func(done, total int) { calls = append(calls, done) })
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i*i {
				t.Fatalf("workers %d: result %d = %d, want %d", workers, i, v, i*i)
			}
		}
		if len(calls) != 50 || calls[49] != 50 || !slices.IsSorted(calls) {
			t.Errorf("workers %d: progress calls %v, want 1..50", workers, calls)
		}
		_, err = Map(50, workers, func(i int) (int, error) {
			if i == 7 || i == 9 {
				return 0, fmt.Errorf("item %d", i)
			}
			return i, nil
		}, nil)
		if err == nil || err.Error() != "item 7" {
			t.Errorf("workers %d: error %v, want the lowest failing item's (item 7)", workers, err)
		}
	}
}

func TestParseRates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []float64
		err  bool
	}{
		{"4:20:4", []float64{4, 8, 12, 16, 20}, false},
		{"0.1:0.5:0.1", []float64{0.1, 0.2, 0.3, 0.4, 0.5}, false},
		{"1:2:5", []float64{1}, false},
		{"3,1,2", []float64{3, 1, 2}, false},
		{"", nil, true},
		{"0:4:1", nil, true},
		{"4:1:1", nil, true},
		{"1:4:0", nil, true},
		{"1:4", nil, true},
		{"1,x", nil, true},
		{"1,-2", nil, true},
		{"2,2", nil, true},
		{"1:100000:1", nil, true},
		{"NaN,1", nil, true},
	} {
		got, err := ParseRates(c.in)
		if (err != nil) != c.err {
			t.Errorf("ParseRates(%q): error %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && !slices.Equal(got, c.want) {
			t.Errorf("ParseRates(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func FuzzParseRates(f *testing.F) {
	for _, s := range []string{"4:20:4", "1,2,3", "0.5:1:0.25", ":", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRates(s)
		if err != nil {
			return
		}
		if len(rs) == 0 || len(rs) > 1001 {
			t.Fatalf("%q: %d rates", s, len(rs))
		}
		for _, r := range rs {
			if !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("%q: rate %g", s, r)
			}
		}
	})
}

func TestWindowLeavesOutWarmUpAndDrain(t *testing.T) {
	cfg := small()
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run()
	w := DefaultWindow()
	m := Measure(e.Setup().Config, res, e.ServerResult(), w)
	all := Measure(e.Setup().Config, res, e.ServerResult(), Window{})
	if all.Summary.Requests != cfg.Workload.Requests {
		t.Errorf("no window: %d requests measured, want all %d", all.Summary.Requests, cfg.Workload.Requests)
	}
	// At most the middle 70 % of the span; at least half of it (the
	// warm-up is the fill time when longer, capped at half the span).
	if n := m.Summary.Requests; n < 120 || n > 320 {
		t.Errorf("window %+v: %d of 400 requests measured, want 120 to 320", w, n)
	}
	if !(m.AchievedPerS > 0 && m.OutputTokensPerS > 0 && m.TokensPerSPerUser.Mean > m.TokensPerSPerUser.P10 && m.TokensPerSPerUser.P10 > 0 &&
		math.Abs(m.TokensPerSPerUser.Mean-m.Summary.TokensPerSPerUser.Mean) < 1e-3) {
		t.Errorf("window figures not filled in: %+v", m)
	}
	if d := m.Summary.TTFT; d.P50 > d.P95 || d.P95 > d.P99 {
		t.Errorf("TTFT p50 %g, p95 %g, p99 %g out of order", d.P50, d.P95, d.P99)
	}
	for _, bad := range []Window{{WarmUp: -0.1}, {Drain: 1}, {WarmUp: 0.5, Drain: 0.5}} {
		if bad.Validate() == nil {
			t.Errorf("window %+v: no error", bad)
		}
	}
}

func TestOverloadIsNotStable(t *testing.T) {
	cfg := small()
	cfg.Workload.Requests = 1000
	cfg.Workload.Rate = 60
	m, err := Simulate(cfg, DefaultWindow(), false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Stable {
		t.Errorf("60 req/s on one H100 (it serves about 17): stable, want not (%+v)", m)
	}
	cfg.Workload.Rate = 4
	if m, _ = Simulate(cfg, DefaultWindow(), false); !m.Stable {
		t.Errorf("4 req/s: not stable: %s", m.Unstable)
	}
}

func mustTerms(t testing.TB, ss ...string) Terms {
	t.Helper()
	ts, err := slo.ParseAll(ss)
	if err != nil {
		t.Fatal(err)
	}
	return Terms(ts)
}

func TestJudgeNamesTheLimitingTerm(t *testing.T) {
	m := &Metrics{Stable: true}
	m.Summary.StreamP99ITL = reports.Dist{N: 10, P99: 180}
	m.Summary.TTFT = reports.Dist{N: 10, P99: 900}
	for _, c := range []struct {
		terms []string
		pass  bool
		lim   string
	}{
		{[]string{"stream-p99-itl:p99<=200ms", "ttft:p99<=1s"}, true, "stream-p99-itl:p99<=200ms"},
		{[]string{"stream-p99-itl:p99<=150ms", "ttft:p99<=1s"}, false, "stream-p99-itl:p99<=150ms"},
		{[]string{"stream-p99-itl:p99<=200ms", "ttft:p99<=500ms"}, false, "ttft:p99<=500ms"},
	} {
		pass, lim, outs, _ := Judge(mustTerms(t, c.terms...), m, nil)
		if pass != c.pass || lim != c.lim || len(outs) != 2 {
			t.Errorf("%v: pass %v, limiting %q; want %v, %q", c.terms, pass, lim, c.pass, c.lim)
		}
	}
	m.Stable = false
	if pass, lim, _, _ := Judge(mustTerms(t, "ttft:p99<=1s"), m, nil); pass || lim != StableTerm {
		t.Errorf("an unstable run: pass %v, limiting %q; want false, %q", pass, lim, StableTerm)
	}
}

// TestBisectionAnswerPassesAndFailsJustAbove checks the search's answer:
// a run at max_rate holds every term, one at the failing rate above it
// does not, and the two are within the tolerance.
func TestBisectionAnswerPassesAndFailsJustAbove(t *testing.T) {
	t.Parallel()
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: mustTerms(t, "stream-p99-itl:p99<=120ms")}
	v := variant(t, small())
	cs, err := s.SearchConfig(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range cs.Capacity.PerSeed {
		if !(sc.MaxRate > 0) {
			t.Fatalf("seed %d: max rate %g", sc.Seed, sc.MaxRate)
		}
		if w := sc.FailRate - sc.MaxRate; w <= 0 || w > s.Tolerance*sc.MaxRate {
			t.Errorf("seed %d: bracket [%g, %g] not within %g of the rate", sc.Seed, sc.MaxRate, sc.FailRate, s.Tolerance)
		}
		at, err := s.probe(v, v.Config, sc.MaxRate, sc.Seed)
		if err != nil {
			t.Fatal(err)
		}
		above, err := s.probe(v, v.Config, sc.FailRate, sc.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if !*at.Pass || *above.Pass {
			t.Errorf("seed %d: pass at max rate %g: %v, at %g just above: %v; want true, false", sc.Seed, sc.MaxRate, *at.Pass, sc.FailRate, *above.Pass)
		}
	}
	if got := len(cs.Points); got != cs.Capacity.PerSeed[0].Probes+cs.Capacity.PerSeed[1].Probes {
		t.Errorf("%d points kept, want every probe", got)
	}
}

func TestTighterSLONeverGivesAHigherRate(t *testing.T) {
	t.Parallel()
	v := variant(t, small())
	prev := math.Inf(1)
	for _, limit := range []string{"200ms", "130ms", "100ms"} {
		s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: mustTerms(t, "stream-p99-itl:p99<="+limit)}
		cs, err := s.SearchConfig(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := cs.Capacity.MaxRate; r > prev {
			t.Errorf("stream-p99-itl:p99<=%s: %g req/s, above the looser limit's %g", limit, r, prev)
		} else {
			prev = r
		}
	}
}

func TestMoreReplicasNeverGiveALowerRate(t *testing.T) {
	t.Parallel()
	prev := 0.0
	for _, n := range []int{1, 2, 3} {
		cfg := small()
		cfg.Cluster.Replicas = n
		cfg.Workload.Requests = 700 * n // about the same span of arrivals at n times the rate
		s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1}, Terms: mustTerms(t, "stream-p99-itl:p99<=150ms")}
		cs, err := s.SearchConfig(variant(t, cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := cs.Capacity.MaxRate; r < prev {
			t.Errorf("%d replicas: %g req/s, below %d replicas' %g", n, r, n-1, prev)
		} else {
			prev = r
		}
		if cs.Capacity.GPUs != n {
			t.Errorf("%d replicas: %d GPUs", n, cs.Capacity.GPUs)
		}
	}
}

func TestTargetFindsTheSmallestReplicaCount(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.Workload.Requests = 800
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: mustTerms(t, "stream-p99-itl:p99<=150ms")}
	v := variant(t, cfg)
	tg := Target{Rate: 30, Field: "cluster.replicas", Max: 16}
	cs, err := s.SearchTarget(v, tg, Prices{"h100-sxm-80gb": 2})
	if err != nil {
		t.Fatal(err)
	}
	tr := cs.Capacity.Target
	if !tr.Holds || tr.Value < 2 {
		t.Fatalf("target %+v: want a count of at least 2 (one replica serves about 17 req/s)", tr)
	}
	ok, _, _, err := s.holdsAt(v, tg, tr.Value)
	if err != nil || !ok {
		t.Errorf("%d replicas: holds %v (%v), want true", tr.Value, ok, err)
	}
	ok, _, _, err = s.holdsAt(v, tg, tr.Value-1)
	if err != nil || ok {
		t.Errorf("%d replicas: holds %v (%v), want false", tr.Value-1, ok, err)
	}
	if cs.Capacity.GPUs != tr.Value || cs.Capacity.USDPerGPUHour != 2 {
		t.Errorf("fleet: %d GPUs at $%g, want %d at $2", cs.Capacity.GPUs, cs.Capacity.USDPerGPUHour, tr.Value)
	}
}

func TestParetoMarksTheNonDominated(t *testing.T) {
	cs := []Capacity{
		{Config: "a", MaxRate: 1, TokensPerSPerGPU: 100, TokensPerSPerUser: 50, StreamP99ITLP99: 100},
		{Config: "b", MaxRate: 1, TokensPerSPerGPU: 200, TokensPerSPerUser: 30, StreamP99ITLP99: 150},
		{Config: "c", MaxRate: 1, TokensPerSPerGPU: 90, TokensPerSPerUser: 40, StreamP99ITLP99: 90},
		{Config: "d", MaxRate: 0, TokensPerSPerGPU: 900, TokensPerSPerUser: 900},
	}
	MarkPareto(cs)
	var user, itl []string
	for _, c := range cs {
		if c.Pareto {
			user = append(user, c.Config)
		}
		if c.ParetoITL {
			itl = append(itl, c.Config)
		}
	}
	if !slices.Equal(user, []string{"a", "b"}) || !slices.Equal(itl, []string{"a", "b", "c"}) {
		t.Errorf("pareto (user) %v, want [a b]; pareto (ITL) %v, want [a b c]", user, itl)
	}
}

func TestSweepDoesNotDependOnWorkers(t *testing.T) {
	t.Parallel()
	cfg := small()
	vs, err := scenario.Expand(cfg, []scenario.Comparison{{Path: "scheduler.max_num_batched_tokens", Values: []string{"512", "8192"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := &SweepPlan{Configs: vs, Rates: []float64{6, 12}, Seeds: []uint64{1, 2}, Window: DefaultWindow(), KneeDrop: 0.2}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, j := range []int{1, 8} {
		pts, err := RunPoints(p, p.Points(), j, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(AnalyzeSweep(p, pts))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	if string(docs[0]) != string(docs[1]) {
		t.Error("sweep results differ between 1 and 8 workers")
	}
	var r SweepResult
	_ = json.Unmarshal(docs[0], &r)
	if len(r.Points) != 8 || len(r.Configs) != 2 {
		t.Fatalf("%d points, %d configs; want 8, 2", len(r.Points), len(r.Configs))
	}
	for i, want := range []struct {
		cfg  string
		rate float64
		seed uint64
	}{{"max_num_batched_tokens=512", 6, 1}, {"max_num_batched_tokens=512", 6, 2}, {"max_num_batched_tokens=512", 12, 1}} {
		if p := r.Points[i]; p.Config != want.cfg || p.Rate != want.rate || p.Seed != want.seed {
			t.Errorf("point %d: %s at %g seed %d, want canonical order %+v", i, p.Config, p.Rate, p.Seed, want)
		}
	}
}

func TestKeysFollowContent(t *testing.T) {
	a, _ := Key("sweep", small())
	b, _ := Key("sweep", small())
	c := small()
	c.Seed = 2
	d, _ := Key("sweep", c)
	if a != b || a == d {
		t.Errorf("keys %s, %s (same content) and %s (another seed)", a, b, d)
	}
	dir := Dir{Path: t.TempDir()}
	if err := dir.Put(a, Point{Config: "x", Rate: 1}); err != nil {
		t.Fatal(err)
	}
	var p Point
	if !dir.Has(a) || dir.Has(d) || dir.Get(a, &p) != nil || p.Config != "x" {
		t.Errorf("store: has %v/%v, read %+v", dir.Has(a), dir.Has(d), p)
	}
	if err := dir.PutPlan(Manifest{Command: "sweep", Args: []string{"--rate=1"}}); err != nil {
		t.Fatal(err)
	}
	if err := dir.PutPlan(Manifest{Command: "sweep", Args: []string{"--rate=1"}}); err != nil {
		t.Errorf("the same plan again: %v", err)
	}
	if err := dir.PutPlan(Manifest{Command: "sweep", Args: []string{"--rate=2"}}); err == nil {
		t.Error("another study's plan in the same directory: no error")
	}
	if got := Shard(7, 1, 3); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("Shard(7, 1, 3) = %v, want [1 4]", got)
	}
}

func TestFleetPricesPools(t *testing.T) {
	c := small()
	c.TP = 2
	c.Cluster.Replicas = 3
	if gpu, n, usd := Fleet(c, Prices{"h100-sxm-80gb": 2}); gpu != "h100-sxm-80gb" || n != 6 || usd != 2 {
		t.Errorf("3 replicas TP2: %s %d GPUs $%g", gpu, n, usd)
	}
	c.TP, c.DP = 1, 8 // data-parallel ranks are GPUs too: 3 replicas of 8
	if _, n, _ := Fleet(c, Prices{}); n != 24 {
		t.Errorf("3 replicas TP1 DP8: %d GPUs, want 24", n)
	}
	c.TP, c.DP = 2, 0
	c.Cluster.Replicas = 1
	c.Cluster.Pools = []sim.PoolConfig{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 1, GPU: "a100-80gb", TP: 4}}
	gpu, n, usd := Fleet(c, Prices{"h100-sxm-80gb": 3, "a100-80gb": 1})
	if gpu != "4×h100-sxm-80gb+4×a100-80gb" || n != 8 || usd != 2 {
		t.Errorf("pools: %s %d GPUs $%g, want 4×h100-sxm-80gb+4×a100-80gb, 8, $2", gpu, n, usd)
	}
	if _, _, usd := Fleet(c, Prices{"h100-sxm-80gb": 3, "a100-80gb": 1, "l40s": 0}); usd != 2 {
		t.Errorf("pools: $%g", usd)
	}
	b, _ := json.Marshal(Capacity{Config: "l40s", USDPerGPUHour: 0, USDPerMillionTokens: 0})
	if !strings.Contains(string(b), `"usd_per_gpu_hour":null`) || !strings.Contains(string(b), `"usd_per_million_tokens":null`) {
		t.Errorf("a GPU without a price: %s, want null costs", b)
	}
	var back Capacity
	if err := json.Unmarshal(b, &back); err != nil || back.USDPerMillionTokens != 0 {
		t.Errorf("null cost read back: %v %v", back.USDPerMillionTokens, err)
	}
	if _, err := ParsePrices([]string{"h100=abc"}); err == nil {
		t.Error("--gpu-price h100=abc: no error")
	}
	if p, err := ParsePrices([]string{"H100-SXM-80GB=$2.5"}); err != nil || p.For("h100-sxm-80gb") != 2.5 {
		t.Errorf("--gpu-price H100-SXM-80GB=$2.5: %v %v", p, err)
	}
}

func TestCheckRated(t *testing.T) {
	c := small()
	c.Workload.Arrival = "closed"
	if err := CheckRated(c); err == nil {
		t.Error("closed loop: no error")
	}
}

// TestIntervalHoldsTheAnswerAndNarrowsWithSeeds: ci_low <= max_rate <=
// ci_high, and fewer seeds give a wider interval.
func TestIntervalHoldsTheAnswerAndNarrowsWithSeeds(t *testing.T) {
	t.Parallel()
	v := variant(t, small())
	width := func(seeds int) float64 {
		s := &Search{Window: DefaultWindow(), Tolerance: 0.05, Seeds: SeedList(1, seeds)}
		cs, err := s.SearchConfig(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := cs.Capacity
		if c.CILow == nil || c.CIHigh == nil || !(*c.CILow <= c.MaxRate && c.MaxRate <= *c.CIHigh) {
			t.Fatalf("%d seeds: max rate %g, interval %v to %v", seeds, c.MaxRate, c.CILow, c.CIHigh)
		}
		if c.Seeds != seeds || c.Probes < seeds || c.CIMethod == "" {
			t.Errorf("%d seeds: seeds %d, probes %d, method %q", seeds, c.Seeds, c.Probes, c.CIMethod)
		}
		return *c.CIHigh - *c.CILow
	}
	if w2, w6 := width(2), width(6); !(w2 > w6) {
		t.Errorf("interval width with 2 seeds %g, with 6 %g: want wider with fewer", w2, w6)
	}
}

// TestAutoSeedsStopsAtThePrecisionOrTheCap: --seeds auto adds seeds until
// the half-width is within the precision, never beyond the cap.
func TestAutoSeedsStopsAtThePrecisionOrTheCap(t *testing.T) {
	t.Parallel()
	s := &Search{Window: DefaultWindow(), Tolerance: 0.05, Seeds: SeedList(1, 3), AutoSeeds: true, Precision: 0.05, MaxSeeds: 6}
	cs, err := s.SearchConfig(variant(t, small()), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cs.Capacity
	if c.Seeds < 3 || c.Seeds > 6 {
		t.Fatalf("%d seeds, want 3 to 6", c.Seeds)
	}
	if half := (*c.CIHigh - *c.CILow) / 2; c.Seeds < 6 && half > 0.05*c.MaxRate*1.0001 {
		t.Errorf("stopped at %d seeds with half-width %g > 5 %% of %g", c.Seeds, half, c.MaxRate)
	}
}

// TestTooFewRequestsNeverHold: below the minimum sample a probe is never
// judged stable, so nothing holds.
func TestTooFewRequestsNeverHold(t *testing.T) {
	cfg := small()
	cfg.Workload.Requests = 10
	s := &Search{Window: DefaultWindow(), Tolerance: 0.05, Seeds: []uint64{1}}
	cs, err := s.SearchConfig(variant(t, cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cs.Capacity; c.MaxRate != 0 || c.CILow != nil || !strings.Contains(c.PerSeed[0].Note, "not judged") {
		t.Errorf("10 requests (80 after 3 doublings): max rate %g, note %q; want nothing held, not judged", c.MaxRate, c.PerSeed[0].Note)
	}
	b, _ := json.Marshal(cs.Capacity)
	if !strings.Contains(string(b), `"max_rate":null`) {
		t.Errorf("JSON %s: want max_rate null", b)
	}
}

// TestSteadyVerdicts: a heavy overload is unstable at the scenario's
// length, a light load stable, and a load near capacity is extended.
func TestSteadyVerdicts(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		verdict string
	}{{60, VerdictUnstable}, {4, VerdictStable}} {
		cfg := small()
		cfg.Workload.Rate = c.rate
		m, err := Simulate(cfg, DefaultWindow(), false)
		if err != nil {
			t.Fatal(err)
		}
		if m.Steady.Verdict != c.verdict {
			t.Errorf("%g req/s: %s (%s), want %s", c.rate, m.Steady.Verdict, m.Steady.Note, c.verdict)
		}
	}
	cfg := small()
	cfg.Workload.Rate = 20
	w := DefaultWindow()
	w.MaxExtend = 1
	m, _ := Simulate(cfg, w, false)
	if m.Stable {
		t.Errorf("20 req/s, 400 requests, never extended: stable (%s); want not conclusive", m.Steady.Note)
	}
}

// TestKneeDoesNotFollowTheGrid: the knee read from grids of 2 and 4 req/s
// differs by less than one step of the finer grid.
func TestKneeDoesNotFollowTheGrid(t *testing.T) {
	t.Parallel()
	knee := func(step float64) (float64, *float64) {
		rates, _ := ParseRates(fmt.Sprintf("4:32:%g", step))
		p := &SweepPlan{Configs: []scenario.Variant{variant(t, sim.DefaultConfig())}, Rates: rates, Seeds: []uint64{1}, Window: DefaultWindow(), KneeDrop: 0.2}
		pts, err := RunPoints(p, p.Points(), 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := AnalyzeSweep(p, pts)
		return r.Configs[0].KneeRate, r.Configs[0].SaturationRate
	}
	k2, s2 := knee(2)
	k4, s4 := knee(4)
	if k2 == 0 || math.Abs(k2-k4) >= 2 {
		t.Errorf("knee %g req/s (grid 2), %g (grid 4): want within one step of 2", k2, k4)
	}
	if s2 == nil || s4 == nil || math.Abs(*s2-*s4) >= 2 {
		t.Errorf("saturation %v (grid 2), %v (grid 4): want both fitted, within 2 req/s", s2, s4)
	}
}

func TestFitSaturation(t *testing.T) {
	x := []float64{5, 10, 15, 20, 25, 30}
	y := []float64{5, 10, 14.9, 18, 18.2, 17.9}
	c, above, ok := fitSaturation(x, y)
	if !ok || math.Abs(c-18.03) > 0.1 || len(above) != 3 {
		t.Errorf("fit %g (%v, %v), want about 18.03 from the 3 points above", c, above, ok)
	}
	if _, _, ok := fitSaturation(x, x); ok {
		t.Error("throughput tracking offered load everywhere: fitted a saturation")
	}
}

// TestSensitivityIsTheScaledSearches: a search with Sensitivity reports
// the mean max rate of the same seeds searched with steps 2 % faster and
// slower (at the finer tolerance; max_rate is rounded to 6 significant
// figures), and their central difference.
func TestSensitivityIsTheScaledSearches(t *testing.T) {
	t.Parallel()
	terms := mustTerms(t, "stream-p99-itl:p99<=120ms")
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: terms, Sensitivity: true}
	v := variant(t, small())
	cs, err := s.SearchConfig(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cs.Capacity
	if c.Sensitivity == nil || len(c.SensitivityRates) != 2 {
		t.Fatalf("capacity %+v: no sensitivity", c)
	}
	for side, k := range []float64{1 - SensitivityStep, 1 + SensitivityStep} {
		scaled := v
		scaled.Config.Cost.StepTimeScale = k
		fine := &Search{Window: DefaultWindow(), Tolerance: SensitivityTolerance, Seeds: s.Seeds, Terms: terms}
		got, err := fine.SearchConfig(scaled, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := got.Capacity.MaxRate; math.Abs(r-c.SensitivityRates[side]) > 1e-5*r {
			t.Errorf("step time ×%g: %g req/s, the sensitivity says %g", k, r, c.SensitivityRates[side])
		}
	}
	want := (c.SensitivityRates[1] - c.SensitivityRates[0]) / (2 * SensitivityStep * c.MaxRate)
	if math.Abs(*c.Sensitivity-want) > 1e-4*math.Abs(want) || want >= 0 { // max_rate is rounded to 6 figures
		t.Errorf("elasticity %g, want %g (< 0: slower steps, less capacity)", *c.Sensitivity, want)
	}
}
