package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// ParseHFConfig reads the bytes of a Hugging Face config.json for a dense
// Llama-style model. name labels the result (Name and Source) and prefixes
// every error, which also names the offending field, e.g.
// "config.json: num_hidden_layers: missing or not a positive integer".
//
// Fields read: hidden_size, num_hidden_layers, num_attention_heads,
// intermediate_size, vocab_size, max_position_embeddings (all required);
// num_key_value_heads (default num_attention_heads); head_dim (default
// hidden_size / num_attention_heads); torch_dtype or dtype (default
// bfloat16; float32 checkpoints count as 16-bit because vLLM serves them
// so by default; float8 as 1 byte); quantization_config (see
// quantization); the mixture-of-experts fields (see moe); the MLA fields
// kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim,
// v_head_dim; tie_word_embeddings;
// attention_bias and model_type "qwen2" (q/k/v biases). A multimodal config
// whose language model sits under text_config is read from there, its
// quantization_config from the top level unless text_config has one.
//
// Params is computed from the architecture: embeddings, per layer the q, k,
// v, o projections (plus biases where present), the gated MLP
// (3·hidden·intermediate) and two norms, the final norm, and lm_head unless
// tied.
func ParseHFConfig(name string, data []byte) (ModelSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: not a JSON object: %w", name, err)
	}
	if cfg == nil {
		return ModelSpec{}, fmt.Errorf("%s: not a JSON object", name)
	}
	// A multimodal config's quantization_config sits at the top level,
	// beside its text_config: read it from there unless the text_config
	// has its own.
	qp := &hfParser{name: name, cfg: cfg}
	if _, ok := cfg["hidden_size"]; !ok {
		if text, ok := cfg["text_config"].(map[string]any); ok {
			cfg = text
			name += ": text_config"
		}
	}
	p := hfParser{name: name, cfg: cfg}
	if p.present("quantization_config") || !qp.present("quantization_config") {
		qp = &p
	}

	m := ModelSpec{Name: name, Source: name}
	m.Hidden = p.dim("hidden_size", maxDim)
	m.Layers = p.dim("num_hidden_layers", maxLayers)
	m.Heads = p.dim("num_attention_heads", maxDim)
	m.Intermediate = p.dim("intermediate_size", maxDim)
	m.Vocab = p.dim("vocab_size", maxVocab)
	m.MaxContext = p.dim("max_position_embeddings", maxCtx)
	if p.err != nil {
		return ModelSpec{}, p.err
	}
	m.KVHeads = m.Heads
	if p.present("num_key_value_heads") {
		m.KVHeads = p.dim("num_key_value_heads", maxDim)
	}
	if p.present("kv_lora_rank") { // multi-head latent attention (DeepSeek)
		m.KVLoRARank = p.dim("kv_lora_rank", maxDim)
		m.QKRopeHeadDim = p.dim("qk_rope_head_dim", maxDim)
		m.QKNopeHeadDim = p.dim("qk_nope_head_dim", maxDim)
		m.VHeadDim = p.dim("v_head_dim", maxDim)
		if p.present("q_lora_rank") {
			m.QLoRARank = p.dim("q_lora_rank", maxDim)
		}
	}
	if p.present("head_dim") {
		m.HeadDim = p.dim("head_dim", maxDim)
	} else if m.KVLoRARank > 0 {
		m.HeadDim = m.QKNopeHeadDim + m.QKRopeHeadDim
	} else if m.Hidden%m.Heads == 0 {
		m.HeadDim = m.Hidden / m.Heads
	} else {
		p.fail("head_dim", fmt.Sprintf("missing, and hidden_size %d is not a multiple of num_attention_heads %d", m.Hidden, m.Heads))
	}
	if p.err == nil && (m.KVHeads > m.Heads || m.Heads%m.KVHeads != 0) {
		p.fail("num_key_value_heads", fmt.Sprintf("%d does not divide num_attention_heads %d", m.KVHeads, m.Heads))
	}
	p.moe(&m)
	p.layerTypes(&m)
	p.chunkedAttention(&m)
	m.DTypeBytes = p.dtype()
	if p.err == nil {
		m.WeightBits, m.ExpertWeightBits, m.WeightFP4 = qp.quantization(&m)
		if p.err == nil {
			p.err = qp.err
		}
	}
	m.TiedEmbeddings = p.boolean("tie_word_embeddings")
	bias := p.boolean("attention_bias") || p.str("model_type") == "qwen2"
	if p.err != nil {
		return ModelSpec{}, p.err
	}

	// Keep ArchParams inside int64: far above any real model (DeepSeek-V3
	// is 6.7·10^11), far below overflow even at 16 bits per weight.
	if est := float64(m.Layers) * float64(m.Hidden) * (float64(m.Experts+m.SharedExperts)*3*float64(m.MoEIntermediate) +
		3*float64(m.Intermediate) + 4*float64(m.Heads)*float64(m.HeadDim)); est > maxParams {
		return ModelSpec{}, fmt.Errorf("%s: the architecture has about %.3g parameters, beyond the supported %.0g", name, est, float64(maxParams))
	}
	m.Params = m.ArchParams()
	if bias {
		m.Params += int64(m.Layers) * int64(m.Heads+2*m.KVHeads) * int64(m.HeadDim)
	}
	m.Description = fmt.Sprintf("from %s: %d layers, %dq/%dkv heads, %d-token context",
		name, m.Layers, m.Heads, m.KVHeads, m.MaxContext)
	if m.IsMoE() {
		m.Description += fmt.Sprintf(", %d experts top-%d", m.Experts, m.ExpertsPerToken)
	}
	if err := m.Validate(); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// layerTypes reads layer_types (gpt-oss, Gemma 3): its "sliding_attention"
// layers attend to the last sliding_window tokens, its "full_attention"
// ones to the whole context. Without layer_types every layer is full
// attention (a sliding_window alone, as Qwen configs carry unused, is
// ignored).
func (p *hfParser) layerTypes(m *ModelSpec) {
	v, ok := p.cfg["layer_types"]
	if !ok || v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok || len(list) != m.Layers {
		p.fail("layer_types", fmt.Sprintf("must be a list of num_hidden_layers = %d entries", m.Layers))
		return
	}
	for i, e := range list {
		switch e {
		case "sliding_attention":
			m.SlidingLayers++
		case "full_attention":
		default:
			p.fail("layer_types", fmt.Sprintf("entry %d is %v, not sliding_attention or full_attention", i, e))
			return
		}
	}
	if m.SlidingLayers == 0 {
		return
	}
	if m.SlidingLayers == m.Layers {
		p.fail("layer_types", "has no full_attention layer (not supported)")
		return
	}
	m.SlidingWindow = p.dim("sliding_window", maxCtx)
}

// chunkedAttention reads Llama 4's attention_chunk_size: a layer that uses
// RoPE attends only to the tokens of its own chunk of attention_chunk_size
// positions; the NoPE layers attend to the whole context. no_rope_layers
// lists 1 for a RoPE layer and 0 for a NoPE one; empty or absent, every
// no_rope_layer_interval-th layer (default 4) is NoPE, as transformers'
// Llama4TextConfig fills it in.
func (p *hfParser) chunkedAttention(m *ModelSpec) {
	if !p.present("attention_chunk_size") || p.str("model_type") != "llama4_text" || p.err != nil {
		return
	}
	m.AttentionChunk = p.dim("attention_chunk_size", maxCtx)
	var list []any
	if v, ok := p.cfg["no_rope_layers"]; ok && v != nil {
		l, ok := v.([]any)
		if !ok || (len(l) != 0 && len(l) != m.Layers) {
			p.fail("no_rope_layers", fmt.Sprintf("must be a list of num_hidden_layers = %d entries", m.Layers))
			return
		}
		list = l
	}
	if len(list) == 0 {
		interval := 4
		if p.present("no_rope_layer_interval") {
			interval = p.dim("no_rope_layer_interval", maxLayers)
		}
		for i := 0; i < m.Layers; i++ {
			if (i+1)%max(interval, 1) != 0 {
				m.ChunkedLayers++
			}
		}
	} else {
		for i, e := range list {
			switch n, _ := e.(json.Number); n.String() {
			case "1":
				m.ChunkedLayers++
			case "0":
			default:
				p.fail("no_rope_layers", fmt.Sprintf("entry %d is %v, not 0 or 1", i, e))
				return
			}
		}
	}
	if m.ChunkedLayers == m.Layers {
		p.fail("no_rope_layers", "has no NoPE (full-attention) layer (not supported)")
	}
	if m.ChunkedLayers == 0 {
		m.AttentionChunk = 0
	}
}

// moe reads the mixture-of-experts fields: the routed expert count
// (num_local_experts: Mixtral, gpt-oss; n_routed_experts: DeepSeek;
// num_experts: Qwen MoE), num_experts_per_tok (experts_per_token),
// moe_intermediate_size (default intermediate_size), n_shared_experts, and
// which layers are dense: DeepSeek's layer i is MoE when
// i ≥ first_k_dense_replace and i % moe_layer_freq == 0; Qwen's when
// (i+1) % decoder_sparse_step == 0 and i is not in mlp_only_layers; Llama
// 4's when (i+1) % interleave_moe_layer_step == 0, each with one shared
// expert.
func (p *hfParser) moe(m *ModelSpec) {
	field := ""
	for _, f := range []string{"num_local_experts", "n_routed_experts", "num_experts"} {
		if p.present(f) {
			field = f
			break
		}
	}
	if field == "" {
		return
	}
	m.Experts = p.dim(field, maxDim)
	if p.present("num_experts_per_tok") {
		m.ExpertsPerToken = p.dim("num_experts_per_tok", maxDim)
	} else {
		m.ExpertsPerToken = p.dim("experts_per_token", maxDim)
	}
	m.MoEIntermediate = m.Intermediate
	if p.present("moe_intermediate_size") {
		m.MoEIntermediate = p.dim("moe_intermediate_size", maxDim)
	}
	if p.present("n_shared_experts") {
		m.SharedExperts = p.dim("n_shared_experts", maxDim)
	}
	if p.str("model_type") == "llama4_text" {
		// Llama 4: every MoE layer has one shared expert as wide as a
		// routed one (intermediate_size); the dense layers' MLP is
		// intermediate_size_mlp wide.
		m.SharedExperts = 1
		if p.present("intermediate_size_mlp") {
			m.Intermediate = p.dim("intermediate_size_mlp", maxDim)
		}
	}
	firstK, freq, step := 0, 1, 1
	if p.present("first_k_dense_replace") {
		firstK = p.count("first_k_dense_replace")
	}
	if p.present("moe_layer_freq") {
		freq = p.dim("moe_layer_freq", maxLayers)
	}
	if p.present("decoder_sparse_step") {
		step = p.dim("decoder_sparse_step", maxLayers)
	}
	if p.present("interleave_moe_layer_step") { // Llama 4, as decoder_sparse_step
		step = p.dim("interleave_moe_layer_step", maxLayers)
	}
	dense := map[int]bool{}
	if v, ok := p.cfg["mlp_only_layers"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			p.fail("mlp_only_layers", "not a list of layer indices")
			return
		}
		for _, e := range list {
			n, ok := e.(json.Number)
			i, err := n.Int64()
			if !ok || err != nil || i < 0 || i >= int64(m.Layers) {
				p.fail("mlp_only_layers", fmt.Sprintf("%v is not a layer index in [0,%d)", e, m.Layers))
				return
			}
			dense[int(i)] = true
		}
	}
	if p.err != nil {
		return
	}
	for i := 0; i < m.Layers; i++ {
		if i < firstK || i%freq != 0 || (i+1)%step != 0 || dense[i] {
			m.DenseLayers++
		}
	}
	if m.ExpertsPerToken > m.Experts {
		p.fail("num_experts_per_tok", fmt.Sprintf("%d exceeds the %d experts", m.ExpertsPerToken, m.Experts))
	}
}

// count reads a non-negative integer no larger than maxLayers.
func (p *hfParser) count(field string) int {
	if num, ok := p.cfg[field].(json.Number); ok && num.String() == "0" {
		return 0
	}
	return p.dim(field, maxLayers)
}

// hfParser reads typed fields from a decoded config, keeping the first error.
type hfParser struct {
	name string
	cfg  map[string]any
	err  error
}

func (p *hfParser) fail(field, why string) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %s: %s", p.name, field, why)
	}
}

// present reports whether field is set to something other than null.
func (p *hfParser) present(field string) bool {
	v, ok := p.cfg[field]
	return ok && v != nil
}

// dim reads a positive integer no larger than limit.
func (p *hfParser) dim(field string, limit int) int {
	num, ok := p.cfg[field].(json.Number)
	if !ok {
		p.fail(field, "missing or not a positive integer")
		return 0
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 {
		p.fail(field, "missing or not a positive integer")
		return 0
	}
	if f > float64(limit) {
		p.fail(field, fmt.Sprintf("%s is beyond the supported %d", num, limit))
		return 0
	}
	return int(f)
}

func (p *hfParser) boolean(field string) bool {
	v, ok := p.cfg[field]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		p.fail(field, "not true or false")
	}
	return b
}

func (p *hfParser) str(field string) string {
	s, _ := p.cfg[field].(string)
	return s
}

// quantization reads quantization_config into bits per weight and per
// routed-expert weight (0: unquantized) and whether 4-bit weights are FP4
// with FP4 activations, given m's architecture and dtype: quant_method fp8
// (per-tensor or block-wise, weight_block_size) is 8 bits; awq and gptq
// with bits 4 are 4; mxfp4 (gpt-oss, experts only, the rest bf16) is 4
// bits for the experts; compressed-tensors as compressedTensors reads it.
func (p *hfParser) quantization(m *ModelSpec) (weight, expert int, fp4 bool) {
	q, ok := p.cfg["quantization_config"]
	if !ok || q == nil {
		return 0, 0, false
	}
	qc, ok := q.(map[string]any)
	if !ok {
		p.fail("quantization_config", "not an object")
		return 0, 0, false
	}
	method, _ := qc["quant_method"].(string)
	switch strings.ToLower(method) {
	case "fp8":
		return 8, 0, false
	case "mxfp4":
		return 0, 4, false
	case "awq", "gptq":
		if b, ok := qc["bits"].(json.Number); ok && b.String() == "4" {
			return 4, 0, false
		}
		p.fail("quantization_config.bits", fmt.Sprintf("%v is not supported for %s (only 4)", qc["bits"], method))
		return 0, 0, false
	case "compressed-tensors":
		return p.compressedTensors(qc, m)
	}
	p.fail("quantization_config.quant_method", fmt.Sprintf("%q is not supported (fp8, mxfp4, compressed-tensors, awq or gptq with 4 bits)", method))
	return 0, 0, false
}

// dtype maps torch_dtype (or its newer name, dtype) and an fp8
// quantization_config to bytes per weight.
func (p *hfParser) dtype() int {
	field := "torch_dtype"
	if !p.present(field) && p.present("dtype") {
		field = "dtype"
	}
	v, ok := p.cfg[field]
	if !ok || v == nil {
		return 2
	}
	s, ok := v.(string)
	if !ok {
		p.fail(field, "not a string")
		return 0
	}
	switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
	case "bfloat16", "float16", "half", "bf16", "fp16":
		return 2
	case "float32", "float", "fp32":
		// vLLM's dtype=auto serves float32 checkpoints in 16 bits.
		return 2
	case "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "fp8":
		return 1
	}
	p.fail(field, fmt.Sprintf("unsupported %q", s))
	return 0
}
