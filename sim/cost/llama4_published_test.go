package cost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The llama-4-scout preset's config.json is rebuilt (docs/model.md, "Llama
// 4"); testdata/hf-published/llama-4-scout-17b-16e-instruct-fp8-dynamic is
// a published one, byte for byte: RedHatAI/Llama-4-Scout-17B-16E-Instruct-
// FP8-dynamic's config.json as inference-sim/inference-sim ships it
// (f90a1e3a6787da17c2cd463dab6fb2660b1b1760,
// model_configs/llama-4-scout-17b-16e-instruct-fp8-dynamic/config.json,
// blob b3e005a7). Its text_config is the Instruct model's, its top-level
// quantization_config llm-compressor's FP8-dynamic (compressed-tensors: fp8
// channel-wise weights, fp8 dynamic per-token activations, every Linear
// but the attention projections, routers, lm_head and vision tower),
// which reads as fp8 weights everywhere (see compressedTensors). Every
// other field itlsim reads must agree with the rebuilt preset but the
// context length: the Instruct model's 10,485,760 tokens against the base
// model's 262,144.
func TestLlama4ScoutMatchesPublishedConfig(t *testing.T) {
	path := filepath.Join("testdata", "hf-published", "llama-4-scout-17b-16e-instruct-fp8-dynamic", "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["quantization_config"]; !ok {
		t.Fatal("the published file has no quantization_config: not the file this test names")
	}
	got, err := ParseHFConfig(path, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.WeightBits != 8 || got.ExpertWeightBits != 0 || got.WeightFP4 {
		t.Errorf("quantization: weight bits %d, expert bits %d, fp4 %v; want fp8 weights (8, 0, false)",
			got.WeightBits, got.ExpertWeightBits, got.WeightFP4)
	}
	want, _ := LookupModel("llama-4-scout")
	if got.MaxContext != 10_485_760 {
		t.Errorf("published Instruct context %d, want 10485760", got.MaxContext)
	}
	got.Name, got.Source, got.Description, got.MaxContext = want.Name, want.Source, want.Description, want.MaxContext
	got.WeightBits = want.WeightBits
	if got != want {
		t.Errorf("published config\n%+v\nrebuilt preset\n%+v", got, want)
	}
	if p, w := got.ArchParams(), want.ArchParams(); p != w {
		t.Errorf("parameters %d, preset %d", p, w)
	}
}
