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
// so by default; float8 as 1 byte); quantization_config (only quant_method
// "fp8" is supported, as 1-byte weights); tie_word_embeddings;
// attention_bias and model_type "qwen2" (q/k/v biases). A multimodal config
// whose language model sits under text_config is read from there.
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
	if _, ok := cfg["hidden_size"]; !ok {
		if text, ok := cfg["text_config"].(map[string]any); ok {
			cfg = text
			name += ": text_config"
		}
	}
	p := hfParser{name: name, cfg: cfg}

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
	if p.present("head_dim") {
		m.HeadDim = p.dim("head_dim", maxDim)
	} else if m.Hidden%m.Heads == 0 {
		m.HeadDim = m.Hidden / m.Heads
	} else {
		p.fail("head_dim", fmt.Sprintf("missing, and hidden_size %d is not a multiple of num_attention_heads %d", m.Hidden, m.Heads))
	}
	if p.err == nil && (m.KVHeads > m.Heads || m.Heads%m.KVHeads != 0) {
		p.fail("num_key_value_heads", fmt.Sprintf("%d does not divide num_attention_heads %d", m.KVHeads, m.Heads))
	}
	m.DTypeBytes = p.dtype()
	m.TiedEmbeddings = p.boolean("tie_word_embeddings")
	bias := p.boolean("attention_bias") || p.str("model_type") == "qwen2"
	if p.err != nil {
		return ModelSpec{}, p.err
	}

	m.Params = m.ArchParams()
	if bias {
		m.Params += int64(m.Layers) * int64(m.Heads+2*m.KVHeads) * int64(m.HeadDim)
	}
	m.Description = fmt.Sprintf("from %s: %d layers, %dq/%dkv heads, %d-token context",
		name, m.Layers, m.Heads, m.KVHeads, m.MaxContext)
	if err := m.Validate(); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
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

// dtype maps torch_dtype (or its newer name, dtype) and an fp8
// quantization_config to bytes per weight.
func (p *hfParser) dtype() int {
	if q, ok := p.cfg["quantization_config"]; ok && q != nil {
		qc, ok := q.(map[string]any)
		if !ok {
			p.fail("quantization_config", "not an object")
			return 0
		}
		method, _ := qc["quant_method"].(string)
		if strings.EqualFold(method, "fp8") {
			return 1
		}
		p.fail("quantization_config.quant_method", fmt.Sprintf("%q is not supported (only fp8)", method))
		return 0
	}
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
