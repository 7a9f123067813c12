package cost

import (
	"math"
	"testing"
)

// Published vLLM start-up figures for MoE models, against the same
// derivation as TestKVMemoryAgainstVLLMLogs: the weights vLLM loaded per
// GPU ("Model loading took") and the KV memory and tokens it logged
// ("Available KV cache memory", "GPU KV cache size"). Each row holds
// itlsim's figure within the error docs/model.md states for it; where
// that error is large the page says what is and is not understood.
func TestMoEKVAgainstVLLMLogs(t *testing.T) {
	const planner = "https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/"
	h100, _ := LookupGPU("h100-sxm-80gb")
	for _, r := range []struct {
		source                 string
		model                  string
		fp8                    bool
		tp, maxTokens, maxSeqs int
		util                   float64
		weightsGiB, kvGiB      float64 // vLLM's; 0: not logged
		kvTokens               int     // vLLM's; 0: not logged
		wantWeights, wantKV    float64 // itlsim's, GiB
		wantTokens             int     // itlsim's
		actGiB, nonTorchGiB    float64 // vLLM's profile terms; 0: not published
	}{
		// Qwen3-235B-A22B-FP8 on 4 H100s, vLLM defaults (0.90, 8192
		// batched tokens, 1024 sequences), July 2025 (version not stated).
		{"https://github.com/vllm-project/vllm/issues/21348", "qwen3-235b-a22b", true, 4, 8192, 1024, 0.90,
			0, 8.11, 178_880, 54.74, 12.18, 271_792, 0, 0},
		// gpt-oss-120b on one H100 at 0.95 with 1024 batched tokens.
		{"https://github.com/vllm-project/vllm/issues/27508", "gpt-oss-120b", false, 1, 1024, 1024, 0.95,
			0, 1.71, 0, 60.69, 11.33, 0, 0, 0},
		// gpt-oss-120b on one H100, vLLM 0.14.1 (Triton MXFP4 backend):
		// weights only (the run ran out of memory).
		{"https://github.com/vllm-project/vllm/issues/33155", "gpt-oss-120b", false, 1, 8192, 1024, 0.90,
			64.38, 0, 0, 60.69, 0, 0, 0, 0},
		// gpt-oss-120b on one H100, August 2025 (Marlin MXFP4): weights.
		{"https://github.com/vllm-project/vllm/issues/23278", "gpt-oss-120b", false, 1, 8192, 1024, 0.90,
			65.9651, 0, 0, 60.69, 0, 0, 0, 0},
		// Qwen3-30B-A3B (bf16) on 4 GPUs, vLLM 0.8.5: weights only.
		{"https://github.com/vllm-project/vllm/issues/17469", "qwen3-30b-a3b", false, 4, 8192, 1024, 0.90,
			14.2474, 0, 0, 14.22, 0, 0, 0, 0},
		// llm-d-planner's vLLM 0.19.0 sweep on H100-80GB (79.19 GiB), max_model_len
		// 8192, 8192 batched tokens, 1024 sequences, prefix caching off: each run's
		// start-up log and the profile terms its results_raw.csv tabulates
		// (weights, torch peak increase, non-torch increase, KV memory, tokens).
		{planner + "qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192.log", "qwen3-30b-a3b", false, 1, 8192, 1024, 0.95,
			56.88, 15.41, 168_288, 56.87, 15.88, 173_424, 2.68, 0.27},
		{planner + "mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192.log", "mixtral-8x7b", false, 2, 8192, 1024, 0.95,
			43.51, 28.44, 465_936, 43.50, 29.12, 477_136, 1.21, 2.07},
		{planner + "meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192.log", "llama-4-scout", false, 4, 8192, 1024, 0.95,
			53.12, 16.75, 365_968, 50.18, 19.96, 436_000, 3.19, 2.17},
		{planner + "openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192.log", "gpt-oss-20b", false, 2, 8192, 1024, 0.90,
			7.01, 59.32, 2_591_776, 6.40, 59.86, 2_615_136, 2.87, 2.07},
		// The same model at TP 1 and 0.95: the log prints the KV cache, then
		// runs out of memory warming up the sampler for 1024 sequences.
		{planner + "openai-gpt-oss-20b--h100-80gb--tp1pp1dp1--8192.FAILED.log", "gpt-oss-20b", false, 1, 8192, 1024, 0.95,
			13.64, 58.47, 1_277_184, 12.80, 59.22, 1_293_744, 2.87, 0.25},
	} {
		m, _ := LookupModel(r.model)
		if r.fp8 {
			m.WeightBits = 8
		}
		weights := float64(WeightBytesPerGPU(m, r.tp)) / gib
		reserve := DefaultActivationReserve(m, r.maxTokens, r.maxSeqs, r.tp)
		pool := (float64(h100.DeviceMemoryBytes)*r.util - float64(WeightBytesPerGPU(m, r.tp)) - float64(reserve)) / gib
		// vLLM's "GPU KV cache size" divides the pool by every layer's
		// bytes, sliding-window layers included (gpt-oss: 58.47 GiB /
		// 1,277,184 tokens = 49,152 bytes, all 24 layers); itlsim's blocks
		// hold the full-attention layers alone, so the comparable count
		// sizes every layer as full.
		all := m
		all.SlidingLayers = 0
		tokens := int(pool*gib/float64(KVBytesPerTokenPerGPU(all, r.tp))) / 16 * 16
		act := float64(ActivationPeakBytes(m, r.maxTokens, r.maxSeqs, r.tp)) / gib
		nonTorch := float64(NonTorchBytes(r.tp)) / gib
		t.Logf("%s (%s, TP %d): weights %.2f GiB (vLLM %.2f), activation %.2f (vLLM %.2f), non-torch %.2f (vLLM %.2f), KV %.2f GiB (vLLM %.2f), %d tokens (vLLM %d)",
			r.model, r.source, r.tp, weights, r.weightsGiB, act, r.actGiB, nonTorch, r.nonTorchGiB, pool, r.kvGiB, tokens, r.kvTokens)
		if math.Abs(weights-r.wantWeights) > 0.01 {
			t.Errorf("%s: weights %.2f GiB, want %.2f", r.source, weights, r.wantWeights)
		}
		if r.kvGiB > 0 && math.Abs(pool-r.wantKV) > 0.01 {
			t.Errorf("%s: KV %.2f GiB, want %.2f", r.source, pool, r.wantKV)
		}
		if r.kvTokens > 0 && math.Abs(float64(tokens-r.wantTokens)) > 16 {
			t.Errorf("%s: %d KV tokens, want %d", r.source, tokens, r.wantTokens)
		}
	}
}
