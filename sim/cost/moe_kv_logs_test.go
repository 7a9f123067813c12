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
	}{
		// Qwen3-235B-A22B-FP8 on 4 H100s, vLLM defaults (0.90, 8192
		// batched tokens, 1024 sequences), July 2025 (version not stated).
		{"https://github.com/vllm-project/vllm/issues/21348", "qwen3-235b-a22b", true, 4, 8192, 1024, 0.90,
			0, 8.11, 178_880, 54.74, 12.18, 271_792},
		// gpt-oss-120b on one H100 at 0.95 with 1024 batched tokens.
		{"https://github.com/vllm-project/vllm/issues/27508", "gpt-oss-120b", false, 1, 1024, 1024, 0.95,
			0, 1.71, 0, 60.69, 11.33, 0},
		// gpt-oss-120b on one H100, vLLM 0.14.1 (Triton MXFP4 backend):
		// weights only (the run ran out of memory).
		{"https://github.com/vllm-project/vllm/issues/33155", "gpt-oss-120b", false, 1, 8192, 1024, 0.90,
			64.38, 0, 0, 60.69, 0, 0},
		// gpt-oss-120b on one H100, August 2025 (Marlin MXFP4): weights.
		{"https://github.com/vllm-project/vllm/issues/23278", "gpt-oss-120b", false, 1, 8192, 1024, 0.90,
			65.9651, 0, 0, 60.69, 0, 0},
		// Qwen3-30B-A3B (bf16) on 4 GPUs, vLLM 0.8.5: weights only.
		{"https://github.com/vllm-project/vllm/issues/17469", "qwen3-30b-a3b", false, 4, 8192, 1024, 0.90,
			14.2474, 0, 0, 14.22, 0, 0},
	} {
		m, _ := LookupModel(r.model)
		if r.fp8 {
			m.WeightBits = 8
		}
		weights := float64(WeightBytesPerGPU(m, r.tp)) / gib
		reserve := DefaultActivationReserve(m, r.maxTokens, r.maxSeqs, r.tp)
		pool := (float64(h100.DeviceMemoryBytes)*r.util - float64(WeightBytesPerGPU(m, r.tp)) - float64(reserve)) / gib
		tokens := int(pool*gib/float64(KVBytesPerTokenPerGPU(m, r.tp))) / 16 * 16
		t.Logf("%s (%s, TP %d): weights %.2f GiB (vLLM %.2f), KV %.2f GiB (vLLM %.2f), %d tokens (vLLM %d)",
			r.model, r.source, r.tp, weights, r.weightsGiB, pool, r.kvGiB, tokens, r.kvTokens)
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
