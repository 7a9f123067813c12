package cost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The testdata configs are the published config.json files of two presets;
// reading them must give the presets back.
func TestParseHFConfigMatchesPresets(t *testing.T) {
	for _, name := range []string{"llama-3.1-8b", "qwen2.5-7b", "qwen3-30b-a3b", "qwen3-235b-a22b",
		"mixtral-8x7b", "gpt-oss-20b", "gpt-oss-120b", "qwen3-8b", "qwen3-32b", "deepseek-v3",
		"llama-4-scout", "llama-4-maverick"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "hf", name, "config.json")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseHFConfig(path, data)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := LookupModel(name)
			if want := path + map[bool]string{true: ": text_config"}[strings.HasPrefix(name, "llama-4")]; got.Name != want || got.Source != want {
				t.Errorf("Name %q, Source %q, want both %q", got.Name, got.Source, want)
			}
			got.Name, got.Source, got.Description = want.Name, want.Source, want.Description
			if got != want {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseHFConfigDefaults(t *testing.T) {
	// GPT-style config without num_key_value_heads, head_dim or dtype, tied.
	m, err := ParseHFConfig("tiny", []byte(`{"hidden_size": 64, "num_hidden_layers": 2,
		"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
		"max_position_embeddings": 256, "tie_word_embeddings": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.KVHeads != 4 || m.HeadDim != 16 || m.DTypeBytes != 2 || !m.TiedEmbeddings {
		t.Errorf("defaults: got %+v", m)
	}
	// 100·64 embeddings + 2·(4·64·64 + 3·64·128 + 2·64) + 64 final norm, no lm_head.
	if want := int64(6400 + 2*(16384+24576+128) + 64); m.Params != want {
		t.Errorf("Params = %d, want %d", m.Params, want)
	}
}

func TestParseHFConfigVariants(t *testing.T) {
	base := `"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
		"intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 4096`
	tests := []struct {
		name  string
		json  string
		bytes int
		bits  int // WeightBits
	}{
		{"float32 served in 16 bits", `{` + base + `, "torch_dtype": "float32"}`, 2, 0},
		{"new dtype key", `{` + base + `, "dtype": "float16"}`, 2, 0},
		{"fp8 quantization", `{` + base + `, "torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}}`, 2, 8},
		{"awq int4", `{` + base + `, "quantization_config": {"quant_method": "awq", "bits": 4}}`, 2, 4},
		{"float numbers", `{"hidden_size": 4096.0, "num_hidden_layers": 32, "num_attention_heads": 32,
			"intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 4096}`, 2, 0},
		{"multimodal text_config", `{"model_type": "llava", "text_config": {` + base + `}}`, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseHFConfig("config.json", []byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if m.DTypeBytes != tt.bytes || m.Hidden != 4096 || m.WeightBits != tt.bits {
				t.Errorf("got DTypeBytes %d, Hidden %d, WeightBits %d; want %d, 4096, %d", m.DTypeBytes, m.Hidden, m.WeightBits, tt.bytes, tt.bits)
			}
		})
	}
}

func TestParseHFConfigErrors(t *testing.T) {
	full := map[string]string{
		"hidden_size": "4096", "num_hidden_layers": "32", "num_attention_heads": "32",
		"intermediate_size": "14336", "vocab_size": "32000", "max_position_embeddings": "4096",
	}
	build := func(edit map[string]string) string {
		var parts []string
		for _, k := range []string{"hidden_size", "num_hidden_layers", "num_attention_heads",
			"intermediate_size", "vocab_size", "max_position_embeddings", "num_key_value_heads",
			"head_dim", "torch_dtype", "tie_word_embeddings", "quantization_config"} {
			v, ok := edit[k]
			if !ok {
				v, ok = full[k]
			}
			if ok && v != "-" {
				parts = append(parts, `"`+k+`": `+v)
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	tests := []struct {
		name string
		data string
		want string
	}{
		{"not json", `{"hidden_size": `, "config.json: not a JSON object"},
		{"array", `[1, 2]`, "config.json: not a JSON object"},
		{"null", `null`, "config.json: not a JSON object"},
		{"missing layers", build(map[string]string{"num_hidden_layers": "-"}),
			"config.json: num_hidden_layers: missing or not a positive integer"},
		{"zero heads", build(map[string]string{"num_attention_heads": "0"}),
			"config.json: num_attention_heads: missing or not a positive integer"},
		{"fractional", build(map[string]string{"hidden_size": "4096.5"}),
			"config.json: hidden_size: missing or not a positive integer"},
		{"string number", build(map[string]string{"vocab_size": `"32000"`}),
			"config.json: vocab_size: missing or not a positive integer"},
		{"huge", build(map[string]string{"hidden_size": "1e30"}),
			"config.json: hidden_size: 1e30 is beyond the supported 1048576"},
		{"kv heads", build(map[string]string{"num_key_value_heads": "5"}),
			"config.json: num_key_value_heads: 5 does not divide num_attention_heads 32"},
		{"head_dim underivable", build(map[string]string{"num_attention_heads": "30", "num_key_value_heads": "10"}),
			"config.json: head_dim: missing, and hidden_size 4096 is not a multiple of num_attention_heads 30"},
		{"dtype", build(map[string]string{"torch_dtype": `"int4"`}), `config.json: torch_dtype: unsupported "int4"`},
		{"dtype type", build(map[string]string{"torch_dtype": "16"}), "config.json: torch_dtype: not a string"},
		{"tie type", build(map[string]string{"tie_word_embeddings": `"yes"`}),
			"config.json: tie_word_embeddings: not true or false"},
		{"top-k beyond the experts", `{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
			"intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64, "num_experts": 4, "num_experts_per_tok": 8}`,
			`config.json: num_experts_per_tok: 8 exceeds the 4 experts`},
		{"mlp_only_layers out of range", `{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
			"intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64, "num_experts": 4, "num_experts_per_tok": 2,
			"mlp_only_layers": [5]}`, `config.json: mlp_only_layers: 5 is not a layer index in [0,2)`},
		{"MLA without rope dim", `{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
			"intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64, "kv_lora_rank": 16}`,
			`config.json: qk_rope_head_dim: missing or not a positive integer`},
		{"experts beyond int64", `{"hidden_size": 1048576, "num_hidden_layers": 4096, "num_attention_heads": 1,
			"intermediate_size": 8, "vocab_size": 8, "max_position_embeddings": 8, "num_experts": 1048576, "num_experts_per_tok": 1,
			"moe_intermediate_size": 1048576}`, `beyond the supported 1e+17`},
		{"awq 3-bit", build(map[string]string{"quantization_config": `{"quant_method": "awq", "bits": 3}`}),
			`config.json: quantization_config.bits: 3 is not supported for awq (only 4)`},
		{"bitsandbytes", build(map[string]string{"quantization_config": `{"quant_method": "bitsandbytes"}`}),
			`config.json: quantization_config.quant_method: "bitsandbytes" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHFConfig("config.json", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// FuzzParseHFConfig: no input panics, and whatever parses is a valid spec a
// roofline can be built from.
func FuzzParseHFConfig(f *testing.F) {
	for _, name := range []string{"llama-3.1-8b", "qwen2.5-7b", "qwen3-30b-a3b", "qwen3-235b-a22b",
		"mixtral-8x7b", "gpt-oss-20b", "qwen3-8b", "qwen3-32b", "deepseek-v3", "llama-4-maverick"} {
		data, err := os.ReadFile(filepath.Join("testdata", "hf", name, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"text_config": {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
		"intermediate_size": 8, "vocab_size": 8, "max_position_embeddings": 8}}`))
	f.Add([]byte(`{"hidden_size": 1048576, "num_hidden_layers": 4096, "num_attention_heads": 1,
		"intermediate_size": 1048576, "vocab_size": 16777216, "max_position_embeddings": 2147483648}`))
	if data, err := os.ReadFile(filepath.Join("testdata", "hf-published", "llama-4-scout-17b-16e-instruct-fp8-dynamic", "config.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{` + ctMoE + `, "quantization_config": ` + ctConfig("mixed-precision", `["lm_head", "re:.*mlp.gate$", "model.layers.0.self_attn.q_proj"]`,
		"group_0", `{"format": "float-quantized", "weights": `+ctFP8W+`, "input_activations": `+ctFP8A+`, "targets": ["Linear"]}`,
		"group_1", `{"format": "nvfp4-pack-quantized", "weights": `+ctF4W+`, "input_activations": `+ctF4A+`, "targets": ["re:.*mlp.experts.*"]}`) + `}`))
	f.Add([]byte(`{` + ctDense + `, "quantization_config": ` + ctConfig("pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctI4W, "null", `["Linear"]`)) + `}`))
	f.Add([]byte(`{"hidden_size": -1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	h100, _ := LookupGPU("h100-sxm-80gb")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseHFConfig("fuzz", data)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed spec does not validate: %v", err)
		}
		if m.Params <= 0 || m.WeightBytes() <= 0 || m.KVBytesPerToken() <= 0 {
			t.Fatalf("non-positive sizes: %+v", m)
		}
		r, err := NewRoofline(m, h100, 1, DefaultRoofline())
		if err != nil {
			t.Fatalf("roofline of a valid spec: %v", err)
		}
		var b Batch
		b.AddPrefill(0, 1)
		b.AddDecode(m.MaxContext)
		if ns := r.StepNS(&b); ns < 1 || ns > maxStepNS {
			t.Fatalf("step of %d ns", ns)
		}
	})
}
