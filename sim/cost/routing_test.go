package cost

import (
	"math"
	"strings"
	"testing"
)

func withRouting(t *testing.T, name, gpu string, p Parallelism, zipf float64, load []float64) *Roofline {
	t.Helper()
	m, _ := LookupModel(name)
	g, _ := LookupGPU(gpu)
	cfg := DefaultRoofline()
	cfg.MoERoutingZipf, cfg.MoEExpertLoad = zipf, load
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := NewRooflineParallel(m, g, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func decodeBatch(n int) *Batch { return &Batch{DecodeSeqs: n, DecodeContext: int64(n) * 2048} }

// A measured load that is the same on every expert is uniform routing: the
// skewed formulas reduce to the uniform ones (to rounding), with and
// without expert parallelism.
func TestRoutingEqualLoadIsUniform(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	equal := make([]float64, m.Experts)
	for i := range equal {
		equal[i] = 7
	}
	for _, p := range []Parallelism{{TP: 8}, {TP: 1, DP: 8, ExpertParallel: true}} {
		u := withRouting(t, "deepseek-v3", "h200-141gb", p, 0, nil)
		e := withRouting(t, "deepseek-v3", "h200-141gb", p, 0, equal)
		for _, n := range []int{1, 16, 256} {
			b := decodeBatch(n)
			if a, c := float64(u.StepNS(b)), float64(e.StepNS(b)); math.Abs(a-c) > 1e-6*a+1 {
				t.Errorf("%+v, %d seqs: equal load %v ns, uniform %v ns", p, n, c, a)
			}
			if a, c := u.StepWork(b).Bytes, e.StepWork(b).Bytes; math.Abs(a-c) > 1e-9*a {
				t.Errorf("%+v, %d seqs: equal load reads %g bytes, uniform %g", p, n, c, a)
			}
		}
		if p.ExpertParallel {
			if a, c := u.BusiestRows(256), e.BusiestRows(256); math.Abs(a-c) > 1e-9*a {
				t.Errorf("busiest rows: equal load %g, uniform %g", c, a)
			}
		}
	}
}

// Zipf routing touches fewer distinct experts at small batches, so a
// decode step reads fewer expert bytes and is shorter; at a large batch
// every expert is touched either way. Qwen3-30B-A3B (128 experts, top-8)
// at 16 sequences: uniform touches 128·(1 − (1 − 8/128)^16) = 82.4 experts.
func TestRoutingZipfFewerExperts(t *testing.T) {
	u := withRouting(t, "qwen3-30b-a3b", "h100-sxm-80gb", Parallelism{TP: 1}, 0, nil)
	z := withRouting(t, "qwen3-30b-a3b", "h100-sxm-80gb", Parallelism{TP: 1}, 1.2, nil)
	if d := u.distinctExperts(16); math.Abs(d-128*(1-math.Pow(1-8.0/128, 16))) > 1e-9 || math.Abs(d-82.4) > 0.05 {
		t.Errorf("uniform distinct experts at 16 tokens = %.2f, want 82.4", d)
	}
	dz := z.distinctExperts(16)
	if !(dz < 0.8*u.distinctExperts(16)) || dz < 8 {
		t.Errorf("zipf 1.2 distinct experts at 16 tokens = %.2f, want fewer than 0.8 × uniform's %.2f and ≥ 8", dz, u.distinctExperts(16))
	}
	if d := z.distinctExperts(1); math.Abs(d-8) > 1e-9 {
		t.Errorf("one token touches its top-k: %.3f experts, want 8", d)
	}
	small, large := decodeBatch(16), decodeBatch(1024)
	if !(z.StepNS(small) < u.StepNS(small)) {
		t.Errorf("16 seqs: zipf step %d ns, not shorter than uniform %d", z.StepNS(small), u.StepNS(small))
	}
	if a, b := float64(z.StepNS(large)), float64(u.StepNS(large)); math.Abs(a/b-1) > 0.02 {
		t.Errorf("1024 seqs: zipf step %.0f ns, uniform %.0f: want within 2 %%", a, b)
	}
}

// With expert parallelism a skew in expert order loads GPU 0, which holds
// the hottest experts: its rows grow with the exponent and a measured
// load on one GPU's experts sends it nearly every row.
func TestRoutingSkewBusiestGPU(t *testing.T) {
	ep := Parallelism{TP: 1, DP: 8, ExpertParallel: true}
	u := withRouting(t, "deepseek-v3", "h200-141gb", ep, 0, nil)
	z1 := withRouting(t, "deepseek-v3", "h200-141gb", ep, 0.5, nil)
	z2 := withRouting(t, "deepseek-v3", "h200-141gb", ep, 1, nil)
	rows := 256.0
	if !(u.BusiestRows(rows) < z1.BusiestRows(rows) && z1.BusiestRows(rows) < z2.BusiestRows(rows)) {
		t.Errorf("busiest rows at 256 tokens: uniform %.1f, zipf 0.5 %.1f, zipf 1 %.1f: want increasing",
			u.BusiestRows(rows), z1.BusiestRows(rows), z2.BusiestRows(rows))
	}
	m, _ := LookupModel("deepseek-v3")
	hot := make([]float64, m.Experts)
	for i := range hot {
		hot[i] = 1e-9
		if i >= 32 && i < 64 { // GPU 1's 32 experts
			hot[i] = 1
		}
	}
	h := withRouting(t, "deepseek-v3", "h200-141gb", ep, 0, hot)
	if got := h.BusiestRows(rows); got < 0.99*rows*8 {
		t.Errorf("every row to GPU 1's experts: busiest %.1f rows, want ≈ %g", got, rows*8)
	}
	if !(h.StepNS(decodeBatch(256)) > u.StepNS(decodeBatch(256))) {
		t.Error("a step with every row on one GPU is not slower than a uniform one")
	}
}

// No expert takes more than 1/k of the rows (a token picks k distinct
// experts), whatever the exponent, and the shares still sum to 1.
func TestRoutingSharesCapped(t *testing.T) {
	r, err := newRouting(RooflineConfig{MoERoutingZipf: 4}, 256, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i, lm := range r.logMiss {
		q := -math.Expm1(lm)
		if q > 1+1e-12 {
			t.Errorf("expert %d reached with probability %g > 1", i, q)
		}
		sum += q
	}
	if math.Abs(sum-8) > 1e-9 {
		t.Errorf("a token reaches %g experts, want 8", sum)
	}
	if d := r.distinct(1, 0, 256); math.Abs(d-8) > 1e-9 {
		t.Errorf("one token: %g distinct experts, want 8", d)
	}
}

func TestRoutingBadInput(t *testing.T) {
	m, _ := LookupModel("qwen3-30b-a3b")
	dense, _ := LookupModel("llama-3.1-8b")
	g, _ := LookupGPU("h100-sxm-80gb")
	for _, c := range []struct {
		zipf  float64
		load  []float64
		model ModelSpec
		want  string
	}{
		{-1, nil, m, "roofline.moe_routing_zipf: must be in [0,4]"},
		{math.NaN(), nil, m, "roofline.moe_routing_zipf"},
		{1, []float64{1, 2}, m, "not both"},
		{0, []float64{1, -1}, m, "roofline.moe_expert_load[1]: must be a finite load ≥ 0"},
		{0, []float64{0, 0}, m, "must sum to a finite value > 0"},
		{0, []float64{1, 2, 3}, m, "roofline.moe_expert_load: has 3 entries, the model has 128 routed experts"},
		{0, []float64{1, 2, 3}, dense, "roofline.moe_expert_load: model llama-3.1-8b has no routed experts"},
	} {
		cfg := DefaultRoofline()
		cfg.MoERoutingZipf, cfg.MoEExpertLoad = c.zipf, c.load
		err := cfg.Validate()
		if err == nil {
			_, err = NewRoofline(c.model, g, 1, cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("zipf %g, load %v on %s: error %v, want %q", c.zipf, c.load, c.model.Name, err, c.want)
		}
	}
}
