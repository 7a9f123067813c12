package cost

import "fmt"

// ModelSpec is a dense decoder-only transformer (Llama-style: grouped-query
// attention, gated MLP, RMSNorm) as far as serving cost is concerned. Values
// are the Hugging Face config.json figures; presets cite theirs in Source.
type ModelSpec struct {
	// Name is the lower-case preset name or the name given to ParseHFConfig.
	Name string `yaml:"name" json:"name"`
	// Description is one line for `itlsim presets`.
	Description string `yaml:"description" json:"description"`
	// Params is the total parameter count, embeddings and lm_head included.
	Params int64 `yaml:"params" json:"params"`
	// Layers is num_hidden_layers.
	Layers int `yaml:"layers" json:"layers"`
	// Hidden is hidden_size, the residual-stream width.
	Hidden int `yaml:"hidden" json:"hidden"`
	// Heads is num_attention_heads (query heads).
	Heads int `yaml:"heads" json:"heads"`
	// KVHeads is num_key_value_heads; Heads for multi-head attention.
	KVHeads int `yaml:"kv_heads" json:"kv_heads"`
	// HeadDim is the per-head width; Hidden/Heads unless the config says.
	HeadDim int `yaml:"head_dim" json:"head_dim"`
	// Intermediate is intermediate_size, the gated MLP's inner width.
	Intermediate int `yaml:"intermediate" json:"intermediate"`
	// Vocab is vocab_size.
	Vocab int `yaml:"vocab" json:"vocab"`
	// MaxContext is max_position_embeddings, in tokens.
	MaxContext int `yaml:"max_context" json:"max_context"`
	// DTypeBytes is bytes per weight and per KV-cache element: 2 for
	// bf16/fp16, 1 for fp8 checkpoints (fp8 KV cache too).
	DTypeBytes int `yaml:"dtype_bytes" json:"dtype_bytes"`
	// TiedEmbeddings is tie_word_embeddings: lm_head reuses the embedding
	// matrix, so Params counts it once (the logits GEMM still reads it).
	TiedEmbeddings bool `yaml:"tied_embeddings" json:"tied_embeddings"`
	// Source cites where the figures come from (a config.json URL or path).
	Source string `yaml:"source" json:"source"`
}

// Limits on a ModelSpec's dimensions, far above any real model; they keep
// every derived count inside int64.
const (
	maxDim    = 1 << 20 // hidden, heads, head_dim, intermediate
	maxLayers = 1 << 12
	maxVocab  = 1 << 24
	maxCtx    = 1 << 31
)

// WeightBytes is the size of all weights in bytes (Params × DTypeBytes),
// before any tensor-parallel split.
func (m ModelSpec) WeightBytes() int64 { return m.Params * int64(m.DTypeBytes) }

// KVBytesPerToken is the KV cache one token occupies over all layers, K and
// V, for the whole model (no tensor-parallel split): 2·Layers·KVHeads·HeadDim·DTypeBytes.
func (m ModelSpec) KVBytesPerToken() int64 {
	return 2 * int64(m.Layers) * int64(m.KVHeads) * int64(m.HeadDim) * int64(m.DTypeBytes)
}

// ArchParams counts parameters from the architecture: embeddings, per layer
// the q, k, v, o projections, the gated MLP (gate, up, down: 3·Hidden·Intermediate)
// and two RMSNorms, the final norm, and lm_head unless tied. Attention biases
// (Qwen2) are not included; ParseHFConfig adds them when the config has them.
func (m ModelSpec) ArchParams() int64 {
	h, d := int64(m.Hidden), int64(m.HeadDim)
	perLayer := h*int64(m.Heads)*d + 2*h*int64(m.KVHeads)*d + int64(m.Heads)*d*h +
		3*h*int64(m.Intermediate) + 2*h
	p := int64(m.Vocab)*h + int64(m.Layers)*perLayer + h
	if !m.TiedEmbeddings {
		p += int64(m.Vocab) * h
	}
	return p
}

// Validate reports the first impossible field.
func (m ModelSpec) Validate() error {
	name := m.Name
	if name == "" {
		name = "(unnamed)"
	}
	bad := func(field, want string, got any) error {
		return fmt.Errorf("model %s: %s: must be %s, got %v", name, field, want, got)
	}
	switch {
	case m.Layers < 1 || m.Layers > maxLayers:
		return bad("layers", fmt.Sprintf("in [1,%d]", maxLayers), m.Layers)
	case m.Hidden < 1 || m.Hidden > maxDim:
		return bad("hidden", fmt.Sprintf("in [1,%d]", maxDim), m.Hidden)
	case m.Heads < 1 || m.Heads > maxDim:
		return bad("heads", fmt.Sprintf("in [1,%d]", maxDim), m.Heads)
	case m.KVHeads < 1 || m.KVHeads > m.Heads:
		return bad("kv_heads", fmt.Sprintf("in [1,heads=%d]", m.Heads), m.KVHeads)
	case m.Heads%m.KVHeads != 0:
		return bad("kv_heads", fmt.Sprintf("a divisor of heads=%d", m.Heads), m.KVHeads)
	case m.HeadDim < 1 || m.HeadDim > maxDim:
		return bad("head_dim", fmt.Sprintf("in [1,%d]", maxDim), m.HeadDim)
	case m.Intermediate < 1 || m.Intermediate > maxDim:
		return bad("intermediate", fmt.Sprintf("in [1,%d]", maxDim), m.Intermediate)
	case m.Vocab < 1 || m.Vocab > maxVocab:
		return bad("vocab", fmt.Sprintf("in [1,%d]", maxVocab), m.Vocab)
	case m.MaxContext < 1 || m.MaxContext > maxCtx:
		return bad("max_context", fmt.Sprintf("in [1,%d] tokens", maxCtx), m.MaxContext)
	case m.DTypeBytes != 1 && m.DTypeBytes != 2 && m.DTypeBytes != 4:
		return bad("dtype_bytes", "1, 2 or 4", m.DTypeBytes)
	case m.Params < 1:
		return bad("params", "positive", m.Params)
	}
	return nil
}

// GPUSpec is one accelerator as far as serving cost is concerned. Rates are
// vendor datasheet peaks; [RooflineConfig] says what fraction is sustained.
type GPUSpec struct {
	// Name is the lower-case preset name.
	Name string `yaml:"name" json:"name"`
	// MemoryBytes is device memory in bytes (the marketed capacity in GiB).
	MemoryBytes int64 `yaml:"memory_bytes" json:"memory_bytes"`
	// DeviceMemoryBytes is the total the CUDA driver reports
	// (torch.cuda.mem_get_info, vLLM's total_gpu_memory), a little below
	// MemoryBytes because the driver keeps some back; vLLM multiplies it by
	// gpu_memory_utilization. 0 takes MemoryBytes.
	DeviceMemoryBytes int64 `yaml:"device_memory_bytes" json:"device_memory_bytes"`
	// PeakFLOPS is dense (no sparsity) bf16/fp16 tensor throughput, FLOP/s.
	PeakFLOPS float64 `yaml:"peak_flops" json:"peak_flops"`
	// PeakFP8FLOPS is dense fp8 tensor throughput, FLOP/s; 0 when the GPU has
	// no fp8 tensor cores (A100). Used for models with DTypeBytes 1.
	PeakFP8FLOPS float64 `yaml:"peak_fp8_flops" json:"peak_fp8_flops"`
	// MemBandwidth is device memory (HBM/GDDR) bandwidth, bytes/s.
	MemBandwidth float64 `yaml:"mem_bandwidth" json:"mem_bandwidth"`
	// InterconnectBW is GPU-to-GPU bandwidth per GPU in one direction,
	// bytes/s (NVLink, Infinity Fabric; PCIe for cards without either).
	InterconnectBW float64 `yaml:"interconnect_bw" json:"interconnect_bw"`
	// HostLinkBW is GPU↔CPU bandwidth in one direction, bytes/s (PCIe).
	HostLinkBW float64 `yaml:"host_link_bw" json:"host_link_bw"`
	// Source cites the datasheet the figures come from.
	Source string `yaml:"source" json:"source"`
}

// TotalMemoryBytes is the device memory vLLM sizes the cache from:
// DeviceMemoryBytes when known, else MemoryBytes.
func (g GPUSpec) TotalMemoryBytes() int64 {
	if g.DeviceMemoryBytes > 0 {
		return g.DeviceMemoryBytes
	}
	return g.MemoryBytes
}

// PeakFor returns the dense tensor peak for weights of dtypeBytes bytes:
// PeakFP8FLOPS for 1, PeakFLOPS otherwise, 0 if the GPU lacks the format.
func (g GPUSpec) PeakFor(dtypeBytes int) float64 {
	if dtypeBytes == 1 {
		return g.PeakFP8FLOPS
	}
	return g.PeakFLOPS
}

// Validate reports the first impossible field.
func (g GPUSpec) Validate() error {
	name := g.Name
	if name == "" {
		name = "(unnamed)"
	}
	pos := func(field string, v float64) error {
		if !(v > 0) || v > 1e18 {
			return fmt.Errorf("gpu %s: %s: must be positive, got %g", name, field, v)
		}
		return nil
	}
	if g.MemoryBytes < 1 {
		return fmt.Errorf("gpu %s: memory_bytes: must be positive, got %d", name, g.MemoryBytes)
	}
	if g.DeviceMemoryBytes < 0 || g.DeviceMemoryBytes > g.MemoryBytes {
		return fmt.Errorf("gpu %s: device_memory_bytes: must be 0 (memory_bytes) or in [1, memory_bytes %d], got %d", name, g.MemoryBytes, g.DeviceMemoryBytes)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"peak_flops", g.PeakFLOPS}, {"mem_bandwidth", g.MemBandwidth},
		{"interconnect_bw", g.InterconnectBW}, {"host_link_bw", g.HostLinkBW}} {
		if err := pos(f.name, f.v); err != nil {
			return err
		}
	}
	if g.PeakFP8FLOPS < 0 || g.PeakFP8FLOPS > 1e18 || g.PeakFP8FLOPS != g.PeakFP8FLOPS {
		return fmt.Errorf("gpu %s: peak_fp8_flops: must be ≥ 0 (0: no fp8), got %g", name, g.PeakFP8FLOPS)
	}
	return nil
}
