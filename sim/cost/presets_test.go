package cost

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestModelPresets(t *testing.T) {
	names := ModelNames()
	want := []string{"deepseek-v3", "gpt-oss-120b", "gpt-oss-20b", "llama-2-70b", "llama-2-7b", "llama-3.1-70b", "llama-3.1-8b",
		"llama-3.2-1b", "llama-3.3-70b", "llama-4-maverick", "llama-4-scout", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen3-235b-a22b",
		"qwen3-30b-a3b", "qwen3-32b", "qwen3-8b", "yi-34b"}
	if !slices.Equal(names, want) {
		t.Fatalf("ModelNames() = %v, want %v", names, want)
	}
	for _, name := range names {
		m, ok := LookupModel(strings.ToUpper(name))
		if !ok || m.Name != name {
			t.Fatalf("LookupModel(%q) = %q, %v", strings.ToUpper(name), m.Name, ok)
		}
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if m.Source == "" || m.Description == "" {
			t.Errorf("%s: missing Source or Description", name)
		}
		// Params is the architecture count, plus q/k/v biases for Qwen2
		// and gpt-oss.
		want := m.ArchParams()
		if name == "qwen2.5-7b" || strings.HasPrefix(name, "gpt-oss") {
			want += int64(m.Layers) * int64(m.Heads+2*m.KVHeads) * int64(m.HeadDim)
		}
		if m.Params != want {
			t.Errorf("%s: Params %d, architecture gives %d", name, m.Params, want)
		}
	}
	if _, ok := LookupModel("gpt-5"); ok {
		t.Error("LookupModel found an unknown model")
	}
}

// The MoE presets' total and active parameter counts are the model
// cards' (gpt-oss's card counts active parameters without the input
// embedding, 3.61B; ours include it).
func TestMoEPresetParams(t *testing.T) {
	for _, tt := range []struct {
		name          string
		total, active float64 // billions, rounded as the model card
	}{
		{"qwen3-30b-a3b", 30.5, 3.3},
		{"qwen3-235b-a22b", 235, 22},
		{"mixtral-8x7b", 46.7, 12.9},
		{"gpt-oss-20b", 20.9, 3.61 + 0.58},
		{"gpt-oss-120b", 117, 5.13 + 0.58},
		{"deepseek-v3", 671, 37},
		// Llama 4's cards: 17B active; 109B and 400B total with the
		// vision encoder (about 0.9B), which is not counted here.
		{"llama-4-scout", 109 - 0.9, 17},
		{"llama-4-maverick", 400, 17},
	} {
		m, _ := LookupModel(tt.name)
		total, active := float64(m.Params)/1e9, float64(m.ActiveParams())/1e9
		if math.Abs(total/tt.total-1) > 0.02 || math.Abs(active/tt.active-1) > 0.03 {
			t.Errorf("%s: %.2fB total, %.2fB active; model card %.1fB, %.1fB", tt.name, total, active, tt.total, tt.active)
		}
	}
}

func TestGPUPresets(t *testing.T) {
	names := GPUNames()
	want := []string{"a100-40gb", "a100-80gb", "b200-180gb", "gb200", "h100-sxm-80gb", "h20", "h200-141gb", "l40s", "mi300x", "mi325x", "mi355x", "rtx-pro-6000"}
	if !slices.Equal(names, want) {
		t.Fatalf("GPUNames() = %v, want %v", names, want)
	}
	for _, name := range names {
		g, ok := LookupGPU(name)
		if !ok || g.Name != name {
			t.Fatalf("LookupGPU(%q) = %q, %v", name, g.Name, ok)
		}
		if err := g.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if g.Source == "" {
			t.Errorf("%s: missing Source", name)
		}
	}
	if _, ok := LookupGPU("tpu-v5"); ok {
		t.Error("LookupGPU found an unknown GPU")
	}
}

func TestModelSizes(t *testing.T) {
	tests := []struct {
		model      string
		weightsGB  float64 // 10^9 bytes
		kvPerToken int64
	}{
		// 2 (K,V) · 32 layers · 8 heads · 128 · 2 bytes.
		{"llama-3.1-8b", 16.06, 131072},
		{"llama-3.1-70b", 141.1, 327680},
		{"llama-2-7b", 13.48, 524288},
		{"yi-34b", 68.78, 245760},
	}
	for _, tt := range tests {
		m, _ := LookupModel(tt.model)
		if got := float64(m.WeightBytes()) / 1e9; got < tt.weightsGB-0.01 || got > tt.weightsGB+0.01 {
			t.Errorf("%s: WeightBytes = %.2f GB, want %.2f", tt.model, got, tt.weightsGB)
		}
		if got := m.KVBytesPerToken(); got != tt.kvPerToken {
			t.Errorf("%s: KVBytesPerToken = %d, want %d", tt.model, got, tt.kvPerToken)
		}
	}
}

func TestSpecValidateNamesField(t *testing.T) {
	m, _ := LookupModel("llama-3.1-8b")
	m.KVHeads = 5
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "kv_heads") {
		t.Errorf("KVHeads 5 of 32: got %v, want an error naming kv_heads", err)
	}
	g, _ := LookupGPU("l40s")
	g.MemBandwidth = 0
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "mem_bandwidth") {
		t.Errorf("zero bandwidth: got %v, want an error naming mem_bandwidth", err)
	}
}

func TestGPUPricesHaveASourceAndAPreset(t *testing.T) {
	for name, p := range gpuPrices {
		if _, ok := LookupGPU(name); !ok {
			t.Errorf("price for %q, which is no GPU preset", name)
		}
		if !(p.USDPerGPUHour > 0) || p.Source == "" {
			t.Errorf("%s: price %+v, want a positive price with its source", name, p)
		}
	}
	if _, ok := GPUPrice("H100-SXM-80GB"); !ok {
		t.Error("GPUPrice is case-sensitive")
	}
}

// FP4 weights (--quantization mxfp4 / nvfp4) run at the fp4 peak on a GPU
// that has one: a compute-bound prefill of Llama-3.1-70B on a B200 is
// about twice as fast as with fp8, four times bf16; on an H200 (no fp4)
// fp4 weights run at the bf16 peak like int4.
func TestFP4Peak(t *testing.T) {
	m, _ := LookupModel("llama-3.1-70b")
	fp4, fp8 := m, m
	fp4.WeightBits, fp4.WeightFP4 = 4, true
	fp8.WeightBits = 8
	int4 := m
	int4.WeightBits = 4
	prefill := &Batch{PrefillSeqs: 1, PrefillTokens: 8192, PrefillAttn: 8192 * 8193 / 2, PrefillContext: 8192}
	linear := func(m ModelSpec, gpu string) float64 {
		g, _ := LookupGPU(gpu)
		r, err := NewRoofline(m, g, 8, DefaultRoofline())
		if err != nil {
			t.Fatal(err)
		}
		return r.Breakdown(prefill).LinearNS
	}
	if r := linear(fp8, "b200-180gb") / linear(fp4, "b200-180gb"); r < 1.8 || r > 2.1 {
		t.Errorf("b200 prefill GEMMs fp8/fp4 = %.2f, want about 2", r)
	}
	if a, b := linear(fp4, "h200-141gb"), linear(int4, "h200-141gb"); a != b {
		t.Errorf("h200 (no fp4): fp4 %.0f ns, int4 %.0f ns; want equal", a, b)
	}
	for _, name := range GPUNames() {
		g, _ := LookupGPU(name)
		if g.PeakFP4FLOPS > 0 && !(g.PeakFP4FLOPS == 2*g.PeakFP8FLOPS || math.Abs(g.PeakFP4FLOPS/g.PeakFP8FLOPS-2) < 0.01) {
			t.Errorf("%s: fp4 peak %g is not twice fp8's %g", name, g.PeakFP4FLOPS, g.PeakFP8FLOPS)
		}
	}
}
