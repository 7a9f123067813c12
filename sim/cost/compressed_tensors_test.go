package cost

import (
	"strings"
	"testing"
)

// Config groups as llm-compressor writes them (weights and
// input_activations as compressed-tensors' QuantizationArgs), for the
// compressed-tensors tests.
const (
	ctFP8W = `{"num_bits": 8, "type": "float", "strategy": "channel", "dynamic": false, "symmetric": true, "group_size": null}`
	ctFP8A = `{"num_bits": 8, "type": "float", "strategy": "token", "dynamic": true, "symmetric": true}`
	ctI4W  = `{"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "dynamic": false, "symmetric": true, "actorder": null}`
	ctF4W  = `{"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "dynamic": false, "symmetric": true}`
	ctF4A  = `{"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "dynamic": "local", "symmetric": true}`
	ctI8W  = `{"num_bits": 8, "type": "int", "strategy": "channel", "dynamic": false, "symmetric": true}`
	ctI8A  = `{"num_bits": 8, "type": "int", "strategy": "token", "dynamic": true, "symmetric": true}`
)

// ctGroup is one config group: weights, input_activations (JSON or
// "null") and targets.
func ctGroup(w, a, targets string) string {
	return `{"weights": ` + w + `, "input_activations": ` + a + `, "output_activations": null, "targets": ` + targets + `}`
}

// ctConfig is a compressed-tensors quantization_config of format with the
// given groups (name: group JSON, in order) and ignore list.
func ctConfig(format string, ignore string, groups ...string) string {
	var g []string
	for i := 0; i+1 < len(groups); i += 2 {
		g = append(g, `"`+groups[i]+`": `+groups[i+1])
	}
	return `{"quant_method": "compressed-tensors", "format": "` + format + `", "quantization_status": "compressed",
		"kv_cache_scheme": null, "sparsity_config": {}, "ignore": ` + ignore + `, "config_groups": {` + strings.Join(g, ", ") + `}}`
}

const (
	// Llama-3.1-8B's shape, dense.
	ctDense = `"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
		"intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"`
	// Qwen3-30B-A3B's shape: MoE without shared experts or dense layers.
	ctMoE = `"hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
		"head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
		"num_experts_per_tok": 8, "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"`
	// DeepSeek-style MoE with a shared expert and a dense first layer.
	ctShared = `"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "intermediate_size": 4096,
		"moe_intermediate_size": 512, "n_routed_experts": 16, "num_experts_per_tok": 2, "n_shared_experts": 1,
		"first_k_dense_replace": 1, "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"`
)

func TestParseHFConfigCompressedTensors(t *testing.T) {
	linear := `["Linear"]`
	tests := []struct {
		name         string
		arch, qc     string
		weight, expt int
		fp4          bool
	}{
		{"fp8 dynamic (W8A8-FP8)", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)), 8, 0, false},
		{"fp8 static per-tensor, naive-quantized", ctDense, ctConfig("naive-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 8, "type": "float", "strategy": "tensor"}`, `{"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": false}`, linear)), 8, 0, false},
		{"fp8 block-wise", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}`, `{"num_bits": 8, "type": "float", "strategy": "group", "group_size": 128, "dynamic": true}`, linear)), 8, 0, false},
		{"W4A16 int4", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctI4W, "null", linear)), 4, 0, false},
		{"W4A16 channel-wise", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 4, "type": "int", "strategy": "channel"}`, "null", linear)), 4, 0, false},
		{"NVFP4 W4A4", ctDense, ctConfig("nvfp4-pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctF4W, ctF4A, linear)), 4, 0, true},
		{"NVFP4 W4A16", ctDense, ctConfig("nvfp4-pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctF4W, "null", linear)), 4, 0, false},
		{"mixed-precision, group formats", ctDense, `{"quant_method": "compressed-tensors", "format": "mixed-precision", "ignore": ["lm_head"],
			"config_groups": {"group_0": {"format": "pack-quantized", "weights": ` + ctI4W + `, "input_activations": null, "targets": ["Linear"]}}}`, 4, 0, false},
		{"MoE fp8, router gates ignored", ctMoE, ctConfig("float-quantized", `["lm_head", "re:.*mlp.gate$"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)), 8, 0, false},
		{"MoE NVFP4 experts, fp8 rest", ctMoE, ctConfig("mixed-precision", `["lm_head", "re:.*mlp.gate$"]`,
			"group_0", `{"format": "float-quantized", "weights": `+ctFP8W+`, "input_activations": `+ctFP8A+`, "targets": ["Linear"]}`,
			"group_1", `{"format": "nvfp4-pack-quantized", "weights": `+ctF4W+`, "input_activations": `+ctF4A+`, "targets": ["re:.*mlp.experts.*"]}`), 8, 4, true},
		{"MoE int4 experts only (attention ignored)", ctMoE, ctConfig("pack-quantized", `["lm_head", "re:.*self_attn.*", "re:.*mlp.gate$"]`,
			"group_0", ctGroup(ctI4W, "null", linear)), 0, 4, false},
		{"MoE int4 group targeting experts only", ctMoE, ctConfig("pack-quantized", `["lm_head"]`,
			"group_0", ctGroup(ctI4W, "null", `["re:.*mlp.experts.*"]`)), 0, 4, false},
		{"MoE experts ignored: 16-bit experts", ctMoE, ctConfig("float-quantized", `["lm_head", "re:.*mlp.experts.*"]`,
			"group_0", ctGroup(ctFP8W, ctFP8A, linear)), 8, 16, false},
		{"shared experts and dense MLP quantized, attention per layer ignored", ctShared, ctConfig("float-quantized",
			`["lm_head", "model.layers.0.self_attn.q_proj", "model.layers.1.self_attn.q_proj", "model.layers.2.self_attn.q_proj", "model.layers.3.self_attn.kv_b_proj"]`,
			"group_0", ctGroup(ctFP8W, ctFP8A, linear)), 8, 0, false},
		{"shared experts and dense MLP ignored", ctShared, ctConfig("pack-quantized",
			`["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"]`,
			"group_0", ctGroup(ctI4W, "null", linear)), 0, 4, false},
		{"non-routed MLPs ignored layer by layer", ctShared, ctConfig("pack-quantized",
			`["lm_head", "re:.*self_attn.*", "model.layers.0.mlp.down_proj", "model.layers.1.mlp.shared_experts.down_proj", "model.layers.2.mlp.shared_experts.up_proj"]`,
			"group_0", ctGroup(ctI4W, "null", linear)), 0, 4, false},
		{"first layer's MLP kept in bf16 still counts as quantized", ctDense, ctConfig("pack-quantized",
			`["lm_head", "model.layers.0.mlp.down_proj"]`, "group_0", ctGroup(ctI4W, "null", linear)), 4, 0, false},
		{"MoE without shared experts, attention ignored: the rest is bf16", ctMoE, ctConfig("float-quantized",
			`["lm_head", "re:.*self_attn.*"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)), 0, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseHFConfig("config.json", []byte(`{`+tt.arch+`, "quantization_config": `+tt.qc+`}`))
			if err != nil {
				t.Fatal(err)
			}
			if m.WeightBits != tt.weight || m.ExpertWeightBits != tt.expt || m.WeightFP4 != tt.fp4 {
				t.Errorf("weight bits %d, expert bits %d, fp4 %v; want %d, %d, %v",
					m.WeightBits, m.ExpertWeightBits, m.WeightFP4, tt.weight, tt.expt, tt.fp4)
			}
		})
	}

	// A multimodal config keeps quantization_config beside its text_config.
	m, err := ParseHFConfig("config.json", []byte(`{"model_type": "llava", "text_config": {`+ctDense+`},
		"quantization_config": `+ctConfig("float-quantized", `["lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear))+`}`))
	if err != nil || m.WeightBits != 8 {
		t.Errorf("top-level quantization_config beside text_config: weight bits %d, err %v; want 8", m.WeightBits, err)
	}
}

func TestParseHFConfigCompressedTensorsErrors(t *testing.T) {
	linear := `["Linear"]`
	const g0 = "config.json: quantization_config.config_groups.group_0"
	tests := []struct {
		name, arch, qc, want string
	}{
		{"int8 W8A8", ctDense, ctConfig("int-quantized", `["lm_head"]`, "group_0", ctGroup(ctI8W, ctI8A, linear)),
			g0 + ".weights.num_bits: 8-bit int weights are not supported; read are fp8 W8A8"},
		{"int8 W8A16", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctI8W, "null", linear)),
			g0 + ".weights.num_bits: 8-bit int weights are not supported"},
		{"3-bit", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 3, "type": "int", "strategy": "group", "group_size": 128}`, "null", linear)),
			g0 + ".weights.num_bits: 3-bit int weights are not supported"},
		{"2-bit", ctDense, ctConfig("pack-quantized", `[]`, "group_0",
			ctGroup(`{"num_bits": 2, "type": "int", "strategy": "group", "group_size": 64}`, "null", linear)),
			g0 + ".weights.num_bits: 2-bit int weights are not supported"},
		{"fp8 W8A16", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", ctGroup(ctFP8W, "null", linear)),
			g0 + ".input_activations: fp8 weights without input_activations (W8A16) are not supported"},
		{"fp8 weights in a weight-only format", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)),
			g0 + `.format: "pack-quantized" does not quantize activations`},
		{"W4A8 int", ctDense, ctConfig("int-quantized", `["lm_head"]`, "group_0", ctGroup(ctI4W, ctI8A, linear)),
			g0 + ".input_activations: 8-bit int activations with int4 weights (W4A8) are not supported"},
		{"W4A16 naive-quantized", ctDense, ctConfig("naive-quantized", `["lm_head"]`, "group_0", ctGroup(ctI4W, "null", linear)),
			g0 + `.format: "naive-quantized" is not supported for int4 weights (pack-quantized)`},
		{"int4 tensor strategy", ctDense, ctConfig("pack-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 4, "type": "int", "strategy": "tensor"}`, "null", linear)),
			g0 + `.weights.strategy: "tensor" is not supported for int4 weights (group or channel)`},
		{"MXFP4 (group 32) is not NVFP4", ctDense, ctConfig("mxfp4-pack-quantized", `["lm_head"]`, "group_0", ctGroup(ctF4W, ctF4A, linear)),
			`config.json: quantization_config.format: mxfp4-pack-quantized is not supported (float-quantized, int-quantized, mixed-precision, naive-quantized, nvfp4-pack-quantized, pack-quantized)`},
		{"fp4 group 32", ctDense, ctConfig("nvfp4-pack-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}`, "null", linear)),
			g0 + `.weights: 4-bit float weights with strategy "group" and group_size 32 are not NVFP4 (tensor_group, 16)`},
		{"dynamic weights", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 8, "type": "float", "strategy": "channel", "dynamic": true}`, ctFP8A, linear)),
			g0 + ".weights.dynamic: dynamically quantized weights are not supported"},
		{"num_bits not a number", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": "8", "type": "float"}`, ctFP8A, linear)), g0 + `.weights.num_bits: 8 is not an integer in [1,64]`},
		{"type", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0",
			ctGroup(`{"num_bits": 8, "type": "bf"}`, ctFP8A, linear)), g0 + `.weights.type: bf is not int or float`},
		{"weights missing", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", `{"targets": ["Linear"]}`),
			g0 + `.weights: missing`},
		{"group not an object", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", `[]`), g0 + `: not an object`},
		{"no groups", ctDense, ctConfig("float-quantized", `["lm_head"]`),
			`config.json: quantization_config.config_groups: missing or not a non-empty object`},
		{"no targets", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", ctGroup(ctFP8W, ctFP8A, `[]`)),
			g0 + `.targets: missing or not a non-empty list`},
		{"unknown target", ctDense, ctConfig("float-quantized", `["lm_head"]`, "group_0", ctGroup(ctFP8W, ctFP8A, `["Conv2d"]`)),
			g0 + `.targets[0]: Conv2d is not a module class itlsim can place`},
		{"unknown ignore entry", ctDense, ctConfig("float-quantized", `["lm_head", "re:.*foo.*"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)),
			`config.json: quantization_config.ignore[1]: re:.*foo.* is not a module itlsim can place`},
		{"ignore not a list", ctDense, ctConfig("float-quantized", `"lm_head"`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)),
			`config.json: quantization_config.ignore: not a list of module names`},
		{"everything ignored", ctDense, ctConfig("float-quantized", `["re:.*self_attn.*", "re:.*mlp.*"]`, "group_0", ctGroup(ctFP8W, ctFP8A, linear)),
			`config.json: quantization_config.config_groups: quantizes none of the language model's linear layers`},
		{"conflicting groups", ctDense, ctConfig("mixed-precision", `["lm_head"]`,
			"group_0", `{"format": "float-quantized", "weights": `+ctFP8W+`, "input_activations": `+ctFP8A+`, "targets": ["Linear"]}`,
			"group_1", `{"format": "pack-quantized", "weights": `+ctI4W+`, "input_activations": null, "targets": ["Linear"]}`),
			`config.json: quantization_config.config_groups.group_1.targets: "Linear" is also targeted by group_0 with another scheme`},
		{"int4 rest with NVFP4 experts", ctMoE, ctConfig("mixed-precision", `["lm_head"]`,
			"group_0", `{"format": "pack-quantized", "weights": `+ctI4W+`, "input_activations": null, "targets": ["Linear"]}`,
			"group_1", `{"format": "nvfp4-pack-quantized", "weights": `+ctF4W+`, "input_activations": `+ctF4A+`, "targets": ["re:.*mlp.experts.*"]}`),
			`config.json: quantization_config.config_groups: FP4 routed experts with integer 4-bit other weights`},
		{"sparse 2:4", ctDense, `{"quant_method": "compressed-tensors", "format": "float-quantized", "sparsity_config": {"format": "sparse-24-bitmask", "sparsity_structure": "2:4"},
			"config_groups": {"group_0": ` + ctGroup(ctFP8W, ctFP8A, linear) + `}}`,
			`config.json: quantization_config.sparsity_config: sparse compressed-tensors checkpoints are not supported`},
		{"format not a string", ctDense, `{"quant_method": "compressed-tensors", "format": 1, "config_groups": {"group_0": ` + ctGroup(ctFP8W, ctFP8A, linear) + `}}`,
			`config.json: quantization_config.format: 1 is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHFConfig("config.json", []byte(`{`+tt.arch+`, "quantization_config": `+tt.qc+`}`))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v\nwant prefix %s", err, tt.want)
			}
		})
	}
}
