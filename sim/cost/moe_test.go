package cost

import (
	"math"
	"testing"
)

// denseTwin is m with its routed experts merged into one dense MLP of the
// same total width: the same parameter count (less the router), every
// weight read by every token.
func denseTwin(m ModelSpec) ModelSpec {
	d := m
	d.Name += "-dense"
	d.Intermediate = m.Experts * m.MoEIntermediate
	d.Experts, d.ExpertsPerToken, d.MoEIntermediate = 0, 0, 0
	d.Params = d.ArchParams()
	return d
}

// At batch 1 a decode step reads only the top-k experts' weights, so
// Qwen3-30B-A3B decodes far faster than a dense model of its total size.
// The expected ratio from the parameters is active/total = 3.35/30.5 =
// 0.11 in weight bytes; the per-step overhead (1 ms) and the kernels' fixed
// costs, which a MoE layer pays about as often as a dense one, lift it to
// 0.24 on an H100. It must stay well under half (below 0.3 here).
func TestMoEDecodeBatch1(t *testing.T) {
	moe, _ := LookupModel("qwen3-30b-a3b")
	dense := denseTwin(moe)
	if r := float64(dense.Params) / float64(moe.Params); math.Abs(r-1) > 0.001 {
		t.Fatalf("dense twin has %d parameters, the MoE %d", dense.Params, moe.Params)
	}
	g, _ := LookupGPU("h100-sxm-80gb")
	step := func(m ModelSpec, seqs int) float64 {
		r, err := NewRoofline(m, g, 1, DefaultRoofline())
		if err != nil {
			t.Fatal(err)
		}
		return float64(r.StepNS(&Batch{DecodeSeqs: seqs, DecodeContext: int64(seqs) * 1024}))
	}
	activeRatio := float64(moe.ActiveParams()) / float64(moe.Params)
	ratio := step(moe, 1) / step(dense, 1)
	t.Logf("batch 1: MoE %.2f ms, dense %.2f ms, ratio %.3f (active/total %.3f)", step(moe, 1)/1e6, step(dense, 1)/1e6, ratio, activeRatio)
	if ratio >= 0.3 || ratio <= activeRatio {
		t.Errorf("batch-1 decode ratio MoE/dense = %.3f, want in (active/total %.3f, 0.3)", ratio, activeRatio)
	}
	// At batch 256 the tokens touch nearly every expert
	// (128·(1−(1−8/128)^256) ≈ 128), so the step reads nearly all the
	// weights and the advantage shrinks.
	if big := step(moe, 256) / step(dense, 256); big <= ratio*1.5 {
		t.Errorf("batch-256 ratio %.3f is not well above the batch-1 ratio %.3f", big, ratio)
	}
}

// moeGEMM reads k experts' weights for one token and all E for many.
func TestMoEDistinctExperts(t *testing.T) {
	g, _ := LookupGPU("h100-sxm-80gb")
	k, err := NewKernels(g, 2, DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	s := k.shape(2048, 2*768)
	one := k.moeGEMM(s, 1, 128, 8) - k.kernelNS
	if want := 8 * s.weightNS; math.Abs(one/want-1) > 0.05 {
		t.Errorf("one token: %.0f ns, want about 8 experts' weights %.0f ns", one, want)
	}
	many := k.moeGEMM(s, 4096, 128, 8)
	if many < 128*s.weightNS {
		t.Errorf("4,096 tokens: %.0f ns, less than reading all 128 experts (%.0f ns)", many, 128*s.weightNS)
	}
}

// --kv-cache-dtype fp8 halves the bytes per token, so the blocks double.
func TestKVCacheFP8DoublesBlocks(t *testing.T) {
	m, _ := LookupModel("qwen3-30b-a3b")
	g, _ := LookupGPU("h100-sxm-80gb")
	reserve := DefaultActivationReserve(m, 8192, 1024, 1)
	auto, err := KVBlocks(m, g, 1, 16, 0.9, reserve)
	if err != nil {
		t.Fatal(err)
	}
	m.KVDTypeBytes = 1
	fp8, err := KVBlocks(m, g, 1, 16, 0.9, reserve)
	if err != nil {
		t.Fatal(err)
	}
	if fp8 < 2*auto || fp8 > 2*auto+1 {
		t.Errorf("fp8 KV: %d blocks, auto %d; want twice", fp8, auto)
	}
}

// Llama-3.1-70B's bf16 weights (131 GiB) do not fit one H200 at 0.9
// utilisation; in fp8 (66 GiB) they do.
func TestLlama70BOnH200NeedsFP8(t *testing.T) {
	m, _ := LookupModel("llama-3.1-70b")
	g, _ := LookupGPU("h200-141gb")
	if _, err := KVBlocks(m, g, 1, 16, 0.9, DefaultActivationReserve(m, 8192, 1024, 1)); err == nil {
		t.Error("bf16 Llama-3.1-70B fits one H200")
	}
	m.WeightBits = 8
	if got, want := m.WeightBytes(), m.Params; got != want {
		t.Errorf("fp8 weights: %d bytes, want one per parameter (%d)", got, want)
	}
	if _, err := KVBlocks(m, g, 1, 16, 0.9, DefaultActivationReserve(m, 8192, 1024, 1)); err != nil {
		t.Error(err)
	}
	// FP8 weights run at the fp8 peak on an H200; on an A100 (no fp8
	// tensor cores) they only save bytes, at the bf16 peak.
	h, _ := kernelsFor(m, g, DefaultRoofline())
	a100, _ := LookupGPU("a100-80gb")
	a, err := kernelsFor(m, a100, DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	if h.flopsPerNS != g.PeakFP8FLOPS*0.7/1e9 || a.flopsPerNS != a100.PeakFLOPS*0.7/1e9 || a.wBytes != 1 {
		t.Errorf("fp8 kernels: H200 %.0f FLOP/ns, A100 %.0f FLOP/ns with %.1f-byte weights", h.flopsPerNS, a.flopsPerNS, a.wBytes)
	}
}

// DeepSeek-V3's MLA latent (512 + 64 per layer, bf16: 70,272 bytes per
// token) is replicated on every rank, so 8x H200 hold a few hundred
// thousand tokens beside the 625 GiB of fp8 weights.
func TestDeepSeekV3MLAOn8xH200(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	if got := m.KVBytesPerToken(); got != 61*(512+64)*2 {
		t.Errorf("KV bytes per token %d, want 61·576·2", got)
	}
	if KVBytesPerTokenPerGPU(m, 8) != m.KVBytesPerToken() {
		t.Error("the MLA latent is not replicated on every rank")
	}
	g, _ := LookupGPU("h200-141gb")
	blocks, err := KVBlocks(m, g, 8, 16, 0.9, DefaultActivationReserve(m, 8192, 1024, 8))
	if err != nil {
		t.Fatal(err)
	}
	if tokens := blocks * 16; tokens < 200_000 || tokens > 1_000_000 {
		t.Errorf("%d KV tokens, want a few hundred thousand", tokens)
	}
	if _, err := NewRoofline(m, g, 8, DefaultRoofline()); err != nil {
		t.Error(err)
	}
}

// At batch 1 a decode step streams the weights, so fewer bits per weight
// decode faster: int4 (W4A16, 16-row tiles) beats fp8 on an H200, and fp8
// weights beat bf16 on an A100 although the A100 computes them at its bf16
// peak.
func TestQuantizedDecodeBatch1(t *testing.T) {
	step := func(model, gpu string, bits int) float64 {
		m, _ := LookupModel(model)
		m.WeightBits = bits
		g, _ := LookupGPU(gpu)
		r, err := NewRoofline(m, g, 1, DefaultRoofline())
		if err != nil {
			t.Fatal(err)
		}
		return float64(r.StepNS(&Batch{DecodeSeqs: 1, DecodeContext: 1024}))
	}
	if fp8, int4 := step("llama-3.1-70b", "h200-141gb", 8), step("llama-3.1-70b", "h200-141gb", 4); int4 >= 0.8*fp8 {
		t.Errorf("Llama-3.1-70B on H200 at batch 1: int4 %.2f ms, fp8 %.2f ms; want int4 well below", int4/1e6, fp8/1e6)
	}
	if bf16, fp8 := step("llama-3.1-8b", "a100-80gb", 0), step("llama-3.1-8b", "a100-80gb", 8); fp8 >= 0.8*bf16 {
		t.Errorf("Llama-3.1-8B on A100 at batch 1: fp8 %.2f ms, bf16 %.2f ms; want fp8 well below", fp8/1e6, bf16/1e6)
	}
}
