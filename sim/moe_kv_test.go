package sim_test

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// KV tokens as a scenario resolves them (sim.Config.Resolve), against the
// figures docs/model.md tabulates: Qwen3-235B-A22B in FP8 on 4 H100s at
// vLLM's defaults, 271,792 tokens where vLLM logged 178,880
// (vllm-project/vllm#21348, +52 %, see the page), and Llama 4 Scout on 4
// H100s, 349,504.
func TestResolvedMoEKVTokens(t *testing.T) {
	for _, tt := range []struct {
		model, quant string
		want         int
	}{
		{"qwen3-235b-a22b", "fp8", 271_792},
		{"llama-4-scout", "", 349_504},
	} {
		cfg := sim.DefaultConfig()
		cfg.Model, cfg.GPU, cfg.TP, cfg.Quantization = tt.model, "h100-sxm-80gb", 4, tt.quant
		s := resolve(t, cfg)
		if got := s.Config.KVCache.NumGPUBlocks * s.Config.KVCache.BlockSize; got != tt.want {
			t.Errorf("%s %s on 4 H100s: %d KV tokens, want %d", tt.model, tt.quant, got, tt.want)
		}
	}
}
