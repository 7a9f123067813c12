package cost

import "fmt"

// ModelSpec is a decoder-only transformer (Llama-style: grouped-query
// attention, gated MLP, RMSNorm) as far as serving cost is concerned,
// optionally with mixture-of-experts layers (Experts > 0), multi-head latent
// attention (KVLoRARank > 0) and quantized weights or KV cache. Values are
// the Hugging Face config.json figures; presets cite theirs in Source. The
// zero values of the MoE, MLA and quantization fields describe a dense
// 16-bit model exactly as before they existed.
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

	// Mixture of experts; all zero for a dense model.

	// Experts is the routed experts per MoE layer (num_local_experts,
	// n_routed_experts or num_experts); 0 for a dense model.
	Experts int `yaml:"experts,omitempty" json:"experts,omitempty"`
	// ExpertsPerToken is num_experts_per_tok, the routed experts each token
	// runs (top-k).
	ExpertsPerToken int `yaml:"experts_per_token,omitempty" json:"experts_per_token,omitempty"`
	// MoEIntermediate is one expert's gated-MLP inner width
	// (moe_intermediate_size; intermediate_size where the config has none).
	MoEIntermediate int `yaml:"moe_intermediate,omitempty" json:"moe_intermediate,omitempty"`
	// SharedExperts is n_shared_experts: experts every token runs, priced
	// as a dense MLP of SharedExperts·MoEIntermediate.
	SharedExperts int `yaml:"shared_experts,omitempty" json:"shared_experts,omitempty"`
	// DenseLayers is how many of the Layers have a dense MLP of width
	// Intermediate (first_k_dense_replace, moe_layer_freq /
	// decoder_sparse_step, mlp_only_layers); the rest are MoE layers.
	DenseLayers int `yaml:"dense_layers,omitempty" json:"dense_layers,omitempty"`

	// Multi-head latent attention (DeepSeek); KVLoRARank 0 for none.

	// KVLoRARank is kv_lora_rank, the compressed KV latent's width.
	KVLoRARank int `yaml:"kv_lora_rank,omitempty" json:"kv_lora_rank,omitempty"`
	// QLoRARank is q_lora_rank (0: queries are not compressed).
	QLoRARank int `yaml:"q_lora_rank,omitempty" json:"q_lora_rank,omitempty"`
	// QKRopeHeadDim is qk_rope_head_dim, the decoupled rotary key width,
	// cached beside the latent.
	QKRopeHeadDim int `yaml:"qk_rope_head_dim,omitempty" json:"qk_rope_head_dim,omitempty"`
	// QKNopeHeadDim is qk_nope_head_dim.
	QKNopeHeadDim int `yaml:"qk_nope_head_dim,omitempty" json:"qk_nope_head_dim,omitempty"`
	// VHeadDim is v_head_dim.
	VHeadDim int `yaml:"v_head_dim,omitempty" json:"v_head_dim,omitempty"`

	// Sliding-window attention (gpt-oss, Gemma 3); SlidingLayers 0 for none.

	// SlidingWindow is sliding_window: the tokens a sliding-window layer's
	// queries attend to, themselves included.
	SlidingWindow int `yaml:"sliding_window,omitempty" json:"sliding_window,omitempty"`
	// SlidingLayers is how many of the Layers are sliding-window layers
	// (layer_types "sliding_attention"); the rest attend to the whole
	// context. Their KV is bounded by the window: vLLM's hybrid KV cache
	// manager frees a sequence's blocks that fall out of it.
	SlidingLayers int `yaml:"sliding_layers,omitempty" json:"sliding_layers,omitempty"`

	// Chunked attention (Llama 4); ChunkedLayers 0 for none.

	// AttentionChunk is attention_chunk_size: a chunked layer's query at
	// position p attends to the positions of its own chunk,
	// [⌊p/AttentionChunk⌋·AttentionChunk, p].
	AttentionChunk int `yaml:"attention_chunk,omitempty" json:"attention_chunk,omitempty"`
	// ChunkedLayers is how many of the Layers are chunked (Llama 4's RoPE
	// layers; its NoPE layers attend to the whole context). Their KV is
	// sized as full attention's (exact up to AttentionChunk tokens of
	// context, and what vLLM's "GPU KV cache size" counts); their attention
	// FLOPs and reads are bounded by the chunk.
	ChunkedLayers int `yaml:"chunked_layers,omitempty" json:"chunked_layers,omitempty"`

	// Quantization; zero values keep DTypeBytes for everything.

	// WeightBits is bits per weight: 8 for fp8, 4 for int4 (AWQ/GPTQ);
	// 0 takes 8·DTypeBytes. fp8 weights run at the GPU's fp8 peak where it
	// has one (W8A8), others at its bf16 peak with 16-bit activations.
	WeightBits int `yaml:"weight_bits,omitempty" json:"weight_bits,omitempty"`
	// ExpertWeightBits is bits per routed-expert weight when the experts
	// are quantized apart from the rest (gpt-oss: MXFP4 experts, 4 bits
	// plus the shared 8-bit scale of each 32 weights, counted in the
	// weight bytes); 0 takes WeightBits.
	ExpertWeightBits int `yaml:"expert_weight_bits,omitempty" json:"expert_weight_bits,omitempty"`
	// WeightFP4 says 4-bit weights are an FP4 block format (vLLM
	// --quantization mxfp4 or nvfp4) whose GEMMs run at the GPU's fp4
	// tensor peak with fp4 inputs (W4A4) where it has one (Blackwell,
	// CDNA 4); elsewhere, and for integer 4-bit weights, 4-bit weights run
	// at the bf16 peak (W4A16).
	WeightFP4 bool `yaml:"weight_fp4,omitempty" json:"weight_fp4,omitempty"`
	// KVDTypeBytes is bytes per KV-cache element (1 for vLLM's
	// --kv-cache-dtype fp8); 0 takes DTypeBytes ("auto").
	KVDTypeBytes int `yaml:"kv_dtype_bytes,omitempty" json:"kv_dtype_bytes,omitempty"`
}

// IsMoE reports whether the model routes tokens to experts.
func (m ModelSpec) IsMoE() bool { return m.Experts > 0 }

// IsMLA reports whether the model uses multi-head latent attention.
func (m ModelSpec) IsMLA() bool { return m.KVLoRARank > 0 }

// FullAttnLayers is how many layers attend to the whole context.
func (m ModelSpec) FullAttnLayers() int { return m.Layers - m.SlidingLayers }

// MoELayers is how many layers have routed experts.
func (m ModelSpec) MoELayers() int {
	if !m.IsMoE() {
		return 0
	}
	return m.Layers - m.DenseLayers
}

// weightBits is bits per non-expert weight.
func (m ModelSpec) weightBits() int {
	if m.WeightBits > 0 {
		return m.WeightBits
	}
	return 8 * m.DTypeBytes
}

// expertWeightBits is bits per routed-expert weight.
func (m ModelSpec) expertWeightBits() int {
	if m.ExpertWeightBits > 0 {
		return m.ExpertWeightBits
	}
	return m.weightBits()
}

// KVElementBytes is bytes per KV-cache element.
func (m ModelSpec) KVElementBytes() int {
	if m.KVDTypeBytes > 0 {
		return m.KVDTypeBytes
	}
	return m.DTypeBytes
}

// RoutedExpertParams is the parameters of all routed experts of all MoE
// layers (3·Hidden·MoEIntermediate each).
func (m ModelSpec) RoutedExpertParams() int64 {
	return int64(m.MoELayers()) * int64(m.Experts) * 3 * int64(m.Hidden) * int64(m.MoEIntermediate)
}

// ActiveParams is the parameters one token runs through: Params less the
// routed experts it is not sent to (Params for a dense model).
func (m ModelSpec) ActiveParams() int64 {
	if !m.IsMoE() {
		return m.Params
	}
	return m.Params - m.RoutedExpertParams()/int64(m.Experts)*int64(m.Experts-m.ExpertsPerToken)
}

// Limits on a ModelSpec's dimensions, far above any real model; they keep
// every derived count inside int64.
const (
	maxDim    = 1 << 20 // hidden, heads, head_dim, intermediate
	maxLayers = 1 << 12
	maxVocab  = 1 << 24
	maxCtx    = 1 << 31
	maxParams = 1e17 // parameters a parsed config may describe (every dense config within the limits above fits)
)

// WeightBytes is the size of all weights in bytes (Params × DTypeBytes),
// before any tensor-parallel split.
// Quantized weights count WeightBits (ExpertWeightBits for routed experts).
func (m ModelSpec) WeightBytes() int64 {
	if m.WeightBits == 0 && m.ExpertWeightBits == 0 {
		return m.Params * int64(m.DTypeBytes)
	}
	experts := m.RoutedExpertParams()
	return ((m.Params-experts)*int64(m.weightBits())+experts*int64(m.expertWeightBits()))/8 + m.expertScaleBytes()
}

// expertScaleBytes is the block scales of MXFP4 routed experts
// (ExpertWeightBits 4, gpt-oss's quantization_config): one 8-bit E8M0
// scale per 32 weights, 0.25 bits a weight on top of the 4.
func (m ModelSpec) expertScaleBytes() int64 {
	if m.ExpertWeightBits != 4 {
		return 0
	}
	return m.RoutedExpertParams() / 32
}

// KVBytesPerToken is the KV cache one token occupies over all layers, K and
// V, for the whole model (no tensor-parallel split):
// 2·Layers·KVHeads·HeadDim·KVElementBytes; with MLA one latent of
// KVLoRARank + QKRopeHeadDim per layer. Sliding-window layers are left
// out: their KV per sequence is bounded by the window, not the context
// (see [ModelSpec.SlidingKVBytesPerSeqPerGPU]).
func (m ModelSpec) KVBytesPerToken() int64 {
	if m.IsMLA() {
		return int64(m.Layers) * int64(m.KVLoRARank+m.QKRopeHeadDim) * int64(m.KVElementBytes())
	}
	return 2 * int64(m.FullAttnLayers()) * int64(m.KVHeads) * int64(m.HeadDim) * int64(m.KVElementBytes())
}

// SlidingKVBytesPerSeqPerGPU is the most KV one sequence holds in the
// sliding-window layers on one GPU at tensor parallelism tp: the blocks
// that cover the window, ⌈window/blockSize⌉ + 1 of them (a window
// straddles one block boundary more than it fills), as vLLM's sliding
// window manager keeps them. 0 without sliding-window layers.
func (m ModelSpec) SlidingKVBytesPerSeqPerGPU(tp, blockSize int) int64 {
	if m.SlidingLayers == 0 || blockSize < 1 {
		return 0
	}
	heads := max(m.KVHeads/max(tp, 1), 1)
	blocks := int64((m.SlidingWindow+blockSize-1)/blockSize + 1)
	return 2 * int64(m.SlidingLayers) * int64(heads) * int64(m.HeadDim) * int64(m.KVElementBytes()) * blocks * int64(blockSize)
}

// ArchParams counts parameters from the architecture: embeddings, per layer
// the q, k, v, o projections, the gated MLP (gate, up, down: 3·Hidden·Intermediate)
// and two RMSNorms, the final norm, and lm_head unless tied. Attention biases
// (Qwen2) are not included; ParseHFConfig adds them when the config has them.
//
// A MoE layer's MLP is instead its router (Hidden·Experts), its routed
// experts (Experts·3·Hidden·MoEIntermediate) and its shared experts; MLA
// attention counts q_a/q_b (or q), kv_a with its norm, kv_b and o.
func (m ModelSpec) ArchParams() int64 {
	h, d := int64(m.Hidden), int64(m.HeadDim)
	attn := h*int64(m.Heads)*d + 2*h*int64(m.KVHeads)*d + int64(m.Heads)*d*h
	if m.IsMLA() {
		heads, qk := int64(m.Heads), int64(m.QKNopeHeadDim+m.QKRopeHeadDim)
		q := h * heads * qk
		if m.QLoRARank > 0 {
			r := int64(m.QLoRARank)
			q = h*r + r + r*heads*qk
		}
		kv := int64(m.KVLoRARank)
		attn = q + h*(kv+int64(m.QKRopeHeadDim)) + kv + kv*heads*int64(m.QKNopeHeadDim+m.VHeadDim) + heads*int64(m.VHeadDim)*h
	}
	dense := int64(m.Layers-m.MoELayers()) * (attn + 3*h*int64(m.Intermediate) + 2*h)
	moe := int64(m.MoELayers()) * (attn + h*int64(m.Experts) +
		int64(m.Experts+m.SharedExperts)*3*h*int64(m.MoEIntermediate) + 2*h)
	p := int64(m.Vocab)*h + dense + moe + h
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
	case m.Experts < 0 || m.Experts > maxDim:
		return bad("experts", fmt.Sprintf("in [0,%d]", maxDim), m.Experts)
	case m.IsMoE() && (m.ExpertsPerToken < 1 || m.ExpertsPerToken > m.Experts):
		return bad("experts_per_token", fmt.Sprintf("in [1,experts=%d]", m.Experts), m.ExpertsPerToken)
	case m.IsMoE() && (m.MoEIntermediate < 1 || m.MoEIntermediate > maxDim):
		return bad("moe_intermediate", fmt.Sprintf("in [1,%d]", maxDim), m.MoEIntermediate)
	case m.SharedExperts < 0 || m.SharedExperts > maxDim:
		return bad("shared_experts", fmt.Sprintf("in [0,%d]", maxDim), m.SharedExperts)
	case m.DenseLayers < 0 || m.DenseLayers > m.Layers:
		return bad("dense_layers", fmt.Sprintf("in [0,layers=%d]", m.Layers), m.DenseLayers)
	case m.KVLoRARank < 0 || m.KVLoRARank > maxDim || m.QLoRARank < 0 || m.QLoRARank > maxDim:
		return bad("kv_lora_rank", fmt.Sprintf("in [0,%d]", maxDim), m.KVLoRARank)
	case m.IsMLA() && (m.QKRopeHeadDim < 1 || m.QKRopeHeadDim > maxDim || m.QKNopeHeadDim < 1 || m.QKNopeHeadDim > maxDim || m.VHeadDim < 1 || m.VHeadDim > maxDim):
		return bad("qk_rope_head_dim", "with qk_nope_head_dim and v_head_dim positive when kv_lora_rank is set", m.QKRopeHeadDim)
	case m.WeightBits != 0 && m.WeightBits != 4 && m.WeightBits != 8 && m.WeightBits != 16:
		return bad("weight_bits", "0, 4, 8 or 16", m.WeightBits)
	case m.ExpertWeightBits != 0 && m.ExpertWeightBits != 4 && m.ExpertWeightBits != 8 && m.ExpertWeightBits != 16:
		return bad("expert_weight_bits", "0, 4, 8 or 16", m.ExpertWeightBits)
	case m.SlidingLayers < 0 || m.SlidingLayers >= m.Layers:
		return bad("sliding_layers", fmt.Sprintf("in [0,layers=%d) (at least one full-attention layer)", m.Layers), m.SlidingLayers)
	case m.SlidingLayers > 0 && (m.SlidingWindow < 1 || m.SlidingWindow > maxCtx):
		return bad("sliding_window", fmt.Sprintf("in [1,%d] tokens when sliding_layers is set", maxCtx), m.SlidingWindow)
	case m.ChunkedLayers < 0 || m.ChunkedLayers >= m.Layers:
		return bad("chunked_layers", fmt.Sprintf("in [0,layers=%d) (at least one full-attention layer)", m.Layers), m.ChunkedLayers)
	case m.ChunkedLayers > 0 && (m.AttentionChunk < 1 || m.AttentionChunk > maxCtx):
		return bad("attention_chunk", fmt.Sprintf("in [1,%d] tokens when chunked_layers is set", maxCtx), m.AttentionChunk)
	case m.ChunkedLayers > 0 && m.SlidingLayers > 0:
		return bad("chunked_layers", "0 when sliding_layers is set (one windowed kind per model)", m.ChunkedLayers)
	case m.SlidingLayers > 0 && m.IsMLA():
		return bad("sliding_layers", "0 with multi-head latent attention", m.SlidingLayers)
	case m.KVDTypeBytes != 0 && m.KVDTypeBytes != 1 && m.KVDTypeBytes != 2 && m.KVDTypeBytes != 4:
		return bad("kv_dtype_bytes", "0 (auto), 1, 2 or 4", m.KVDTypeBytes)
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
	// PeakFP4FLOPS is dense fp4 tensor throughput (MXFP4/NVFP4 block
	// formats), FLOP/s; 0 when the GPU has no fp4 tensor cores (everything
	// before Blackwell and CDNA 4).
	PeakFP4FLOPS float64 `yaml:"peak_fp4_flops,omitempty" json:"peak_fp4_flops,omitempty"`
	// ScaleUpGPUs is how many GPUs share one NVLink / Infinity Fabric
	// domain at InterconnectBW (8 on an HGX or MI300X platform, 72 on a
	// GB200 NVL72 rack, 1 for PCIe cards); 0 takes 8. Expert-parallel
	// traffic to GPUs beyond it goes over the scale-out network.
	ScaleUpGPUs int `yaml:"scale_up_gpus,omitempty" json:"scale_up_gpus,omitempty"`
	// ScaleOutBW is the scale-out network (InfiniBand / RoCE) bandwidth per
	// GPU in one direction, bytes/s; 0 takes 50e9 (one 400 Gb/s NIC per
	// GPU, as on HGX H100/H200 and MI300X platforms).
	ScaleOutBW float64 `yaml:"scale_out_bw,omitempty" json:"scale_out_bw,omitempty"`
	// ScaleUpLatencyUS and ScaleOutLatencyUS are the fixed time of one
	// all-to-all (MoE dispatch or combine) inside the scale-up domain and
	// across the network, µs; 0 takes 25 (NCCL's small-message collective
	// floor on 8×H100, Vidur's profile, as RooflineConfig's all-reduce).
	ScaleUpLatencyUS  float64 `yaml:"scale_up_latency_us,omitempty" json:"scale_up_latency_us,omitempty"`
	ScaleOutLatencyUS float64 `yaml:"scale_out_latency_us,omitempty" json:"scale_out_latency_us,omitempty"`
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

// Defaults of the interconnect fields a GPU preset leaves 0.
const (
	defaultScaleUpGPUs   = 8
	defaultScaleOutBW    = 50e9
	defaultA2ALatencyUS  = 25
	maxScaleUpGPUs       = 1 << 16
	maxInterconnectLatUS = 1e5
)

// ScaleUp is the GPUs of one NVLink / Infinity Fabric domain.
func (g GPUSpec) ScaleUp() int {
	if g.ScaleUpGPUs > 0 {
		return g.ScaleUpGPUs
	}
	return defaultScaleUpGPUs
}

// ScaleOut is the scale-out network bandwidth per GPU, bytes/s.
func (g GPUSpec) ScaleOut() float64 {
	if g.ScaleOutBW > 0 {
		return g.ScaleOutBW
	}
	return defaultScaleOutBW
}

// A2ALatencyUS is the fixed time of one all-to-all over groups of group
// GPUs: the scale-up latency within the domain, the scale-out one beyond.
func (g GPUSpec) A2ALatencyUS(group int) float64 {
	lat := g.ScaleUpLatencyUS
	if group > g.ScaleUp() {
		lat = g.ScaleOutLatencyUS
	}
	if lat > 0 {
		return lat
	}
	return defaultA2ALatencyUS
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
	if g.PeakFP4FLOPS < 0 || g.PeakFP4FLOPS > 1e18 || g.PeakFP4FLOPS != g.PeakFP4FLOPS {
		return fmt.Errorf("gpu %s: peak_fp4_flops: must be ≥ 0 (0: no fp4), got %g", name, g.PeakFP4FLOPS)
	}
	if g.ScaleUpGPUs < 0 || g.ScaleUpGPUs > maxScaleUpGPUs {
		return fmt.Errorf("gpu %s: scale_up_gpus: must be in [0,%d] (0: 8), got %d", name, maxScaleUpGPUs, g.ScaleUpGPUs)
	}
	if !(g.ScaleOutBW >= 0 && g.ScaleOutBW <= 1e18) {
		return fmt.Errorf("gpu %s: scale_out_bw: must be ≥ 0 (0: 50e9), got %g", name, g.ScaleOutBW)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"scale_up_latency_us", g.ScaleUpLatencyUS}, {"scale_out_latency_us", g.ScaleOutLatencyUS}} {
		if !(f.v >= 0 && f.v <= maxInterconnectLatUS) {
			return fmt.Errorf("gpu %s: %s: must be in [0,%g] µs (0: %d), got %g", name, f.name, float64(maxInterconnectLatUS), defaultA2ALatencyUS, f.v)
		}
	}
	return nil
}
