package cost

import (
	"slices"
	"strings"
)

// gib is 2^30 bytes. Memory capacities are marketed in "GB" but HBM and GDDR
// stacks come in powers of two, so presets store the marketed figure in GiB.
const gib = 1 << 30

// models are the architectures that ship with itlsim. Every figure is the
// model's Hugging Face config.json (URL in Source); Params is ArchParams()
// plus attention biases where the architecture has them and matches the
// count the model card publishes.
var models = map[string]ModelSpec{
	"llama-3.1-8b": {
		Description: "Meta Llama 3.1 8B: 32 layers, GQA 32q/8kv, 128k context",
		// hidden_size 4096, num_hidden_layers 32, num_attention_heads 32,
		// num_key_value_heads 8, intermediate_size 14336, vocab_size 128256,
		// max_position_embeddings 131072, torch_dtype bfloat16, untied.
		Params: 8_030_261_248, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 128256, MaxContext: 131072, DTypeBytes: 2,
		Source: "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
	},
	"llama-3.2-1b": {
		Description: "Meta Llama 3.2 1B: 16 layers, GQA 32q/8kv, 128k context; a draft model for speculative decoding",
		// hidden_size 2048, num_hidden_layers 16, num_attention_heads 32,
		// num_key_value_heads 8, head_dim 64, intermediate_size 8192,
		// vocab_size 128256, max_position_embeddings 131072, torch_dtype
		// bfloat16, tie_word_embeddings true.
		Params: 1_235_814_400, Layers: 16, Hidden: 2048, Heads: 32, KVHeads: 8, HeadDim: 64,
		Intermediate: 8192, Vocab: 128256, MaxContext: 131072, DTypeBytes: 2, TiedEmbeddings: true,
		Source: "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
	},
	"llama-3.1-70b": {
		Description: "Meta Llama 3.1 70B: 80 layers, GQA 64q/8kv, 128k context",
		// hidden_size 8192, num_hidden_layers 80, num_attention_heads 64,
		// num_key_value_heads 8, intermediate_size 28672, vocab_size 128256,
		// max_position_embeddings 131072, torch_dtype bfloat16, untied.
		Params: 70_553_706_496, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 128256, MaxContext: 131072, DTypeBytes: 2,
		Source: "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
	},
	"llama-3.3-70b": {
		Description: "Meta Llama 3.3 70B Instruct: Llama 3.1 70B architecture, 128k context",
		// Same architecture figures as llama-3.1-70b.
		Params: 70_553_706_496, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 128256, MaxContext: 131072, DTypeBytes: 2,
		Source: "https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json",
	},
	"llama-2-7b": {
		Description: "Meta Llama 2 7B: 32 layers, full multi-head attention, 4k context",
		// hidden_size 4096, num_hidden_layers 32, num_attention_heads 32,
		// num_key_value_heads 32, intermediate_size 11008, vocab_size 32000,
		// max_position_embeddings 4096, torch_dtype float16, untied.
		Params: 6_738_415_616, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128,
		Intermediate: 11008, Vocab: 32000, MaxContext: 4096, DTypeBytes: 2,
		Source: "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
	},
	"llama-2-70b": {
		Description: "Meta Llama 2 70B: 80 layers, GQA 64q/8kv, 4k context",
		// hidden_size 8192, num_hidden_layers 80, num_attention_heads 64,
		// num_key_value_heads 8, intermediate_size 28672, vocab_size 32000,
		// max_position_embeddings 4096, torch_dtype float16, untied.
		Params: 68_976_648_192, Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 32000, MaxContext: 4096, DTypeBytes: 2,
		Source: "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json",
	},
	"mistral-7b": {
		Description: "Mistral 7B Instruct v0.2: 32 layers, GQA 32q/8kv, 32k context, no sliding window",
		// hidden_size 4096, num_hidden_layers 32, num_attention_heads 32,
		// num_key_value_heads 8, intermediate_size 14336, vocab_size 32000,
		// max_position_embeddings 32768, sliding_window null, bfloat16.
		// The version Sarathi-Serve's OSDI'24 experiments serve.
		Params: 7_241_732_096, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, MaxContext: 32768, DTypeBytes: 2,
		Source: "https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.2/blob/main/config.json",
	},
	"qwen2.5-7b": {
		Description: "Qwen2.5 7B Instruct: 28 layers, GQA 28q/4kv, 32k context",
		// hidden_size 3584, num_hidden_layers 28, num_attention_heads 28,
		// num_key_value_heads 4, intermediate_size 18944, vocab_size 152064,
		// max_position_embeddings 32768, bfloat16, untied; q/k/v carry biases
		// (Qwen2 architecture), 28·(28+2·4)·128 = 129,024 extra parameters.
		Params: 7_615_616_512, Layers: 28, Hidden: 3584, Heads: 28, KVHeads: 4, HeadDim: 128,
		Intermediate: 18944, Vocab: 152064, MaxContext: 32768, DTypeBytes: 2,
		Source: "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json",
	},
	"yi-34b": {
		Description: "01.AI Yi 34B: 60 layers, GQA 56q/8kv, 4k context (Sarathi-Serve's TP2 model)",
		// hidden_size 7168, num_hidden_layers 60, num_attention_heads 56,
		// num_key_value_heads 8, intermediate_size 20480, vocab_size 64000,
		// max_position_embeddings 4096, bfloat16, untied.
		Params: 34_388_917_248, Layers: 60, Hidden: 7168, Heads: 56, KVHeads: 8, HeadDim: 128,
		Intermediate: 20480, Vocab: 64000, MaxContext: 4096, DTypeBytes: 2,
		Source: "https://huggingface.co/01-ai/Yi-34B/blob/main/config.json",
	},

	// Mixture-of-experts and 2026 dense presets. Each config.json ships
	// under sim/cost/testdata/hf/NAME; Params is ArchParams() of it and
	// matches the model card's total (active in the description).
	"qwen3-30b-a3b": {
		Description: "Qwen3 30B-A3B: 48 layers, GQA 32q/4kv, 128 experts top-8 (3.3B active), 40k context",
		Params:      30_532_110_336, Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128,
		Intermediate: 6144, Vocab: 151936, MaxContext: 40960, DTypeBytes: 2,
		Experts: 128, ExpertsPerToken: 8, MoEIntermediate: 768,
		Source: "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json",
	},
	"qwen3-235b-a22b": {
		Description: "Qwen3 235B-A22B: 94 layers, GQA 64q/4kv, 128 experts top-8 (22B active), 40k context",
		Params:      235_093_610_496, Layers: 94, Hidden: 4096, Heads: 64, KVHeads: 4, HeadDim: 128,
		Intermediate: 12288, Vocab: 151936, MaxContext: 40960, DTypeBytes: 2,
		Experts: 128, ExpertsPerToken: 8, MoEIntermediate: 1536,
		Source: "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json",
	},
	"mixtral-8x7b": {
		Description: "Mistral Mixtral 8x7B: 32 layers, GQA 32q/8kv, 8 experts top-2 (12.9B active), 32k context",
		Params:      46_702_792_704, Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, MaxContext: 32768, DTypeBytes: 2,
		Experts: 8, ExpertsPerToken: 2, MoEIntermediate: 14336,
		Source: "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
	},
	"gpt-oss-20b": {
		// MXFP4 experts (4 bits and an 8-bit scale per 32 weights),
		// bf16 attention, router, embeddings. layer_types alternates
		// 128-token sliding-window and full-attention layers, 12 each.
		// Attention sinks and the experts' biases are left out.
		Description: "OpenAI gpt-oss-20b: 24 layers (12 with a 128-token window), GQA 64q/8kv, 32 experts top-4 in MXFP4 (3.6B active), 128k context",
		Params:      20_908_050_240, Layers: 24, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64,
		Intermediate: 2880, Vocab: 201088, MaxContext: 131072, DTypeBytes: 2,
		Experts: 32, ExpertsPerToken: 4, MoEIntermediate: 2880, ExpertWeightBits: 4,
		SlidingWindow: 128, SlidingLayers: 12,
		Source: "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json",
	},
	"gpt-oss-120b": {
		// As gpt-oss-20b with 36 layers (18 sliding-window) and 128
		// experts. testdata/hf/gpt-oss-120b/config.json is gpt-oss-20b's
		// file with the three fields the published 120b config differs in
		// (num_hidden_layers 36, num_local_experts 128, layer_types of 36).
		Description: "OpenAI gpt-oss-120b: 36 layers (18 with a 128-token window), GQA 64q/8kv, 128 experts top-4 in MXFP4 (5.1B active), 128k context",
		Params:      116_789_232_960, Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64,
		Intermediate: 2880, Vocab: 201088, MaxContext: 131072, DTypeBytes: 2,
		Experts: 128, ExpertsPerToken: 4, MoEIntermediate: 2880, ExpertWeightBits: 4,
		SlidingWindow: 128, SlidingLayers: 18,
		Source: "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json",
	},
	"llama-4-scout": {
		// Llama 4 Scout 17B-16E, text model (the 34-layer vision encoder is
		// not counted). Every layer is MoE: 16 routed experts top-1 plus one
		// shared expert, each 8192 wide. 36 of the 48 layers (the RoPE ones)
		// use chunked attention over 8192-token chunks; every 4th layer
		// (NoPE) attends to the whole context.
		Description: "Meta Llama 4 Scout 17B-16E: 48 layers (36 with 8192-token chunked attention), GQA 40q/8kv, 16 experts top-1 + 1 shared (17.2B active), 256k context",
		Params:      107_769_861_120, Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128,
		Intermediate: 16384, Vocab: 202048, MaxContext: 262144, DTypeBytes: 2,
		Experts: 16, ExpertsPerToken: 1, MoEIntermediate: 8192, SharedExperts: 1,
		AttentionChunk: 8192, ChunkedLayers: 36,
		Source: "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json",
	},
	"llama-4-maverick": {
		// Llama 4 Maverick 17B-128E, text model. interleave_moe_layer_step
		// 2: layers 1, 3, … 47 are MoE (128 routed experts top-1 plus one
		// shared, 8192 wide), the other 24 dense (16384 wide). Chunked
		// attention as Scout.
		Description: "Meta Llama 4 Maverick 17B-128E: 48 layers (36 with 8192-token chunked attention, 24 MoE), GQA 40q/8kv, 128 experts top-1 + 1 shared (17.2B active), 1M context",
		Params:      400_711_848_960, Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128,
		Intermediate: 16384, Vocab: 202048, MaxContext: 1048576, DTypeBytes: 2,
		Experts: 128, ExpertsPerToken: 1, MoEIntermediate: 8192, SharedExperts: 1, DenseLayers: 24,
		AttentionChunk: 8192, ChunkedLayers: 36,
		Source: "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E/blob/main/config.json",
	},
	"qwen3-8b": {
		Description: "Qwen3 8B: 36 layers, GQA 32q/8kv, 40k context",
		Params:      8_190_726_144, Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 12288, Vocab: 151936, MaxContext: 40960, DTypeBytes: 2,
		Source: "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json",
	},
	"qwen3-32b": {
		Description: "Qwen3 32B: 64 layers, GQA 64q/8kv, 40k context",
		Params:      32_762_106_880, Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 25600, Vocab: 151936, MaxContext: 40960, DTypeBytes: 2,
		Source: "https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json",
	},
	"deepseek-v3": {
		// Block-wise FP8 weights (quantization_config fp8, 128×128 blocks),
		// bf16 activations and KV cache. Multi-head latent attention: one
		// 512 + 64 latent per token per layer. 3 dense layers then 58 MoE
		// layers of 256 routed experts top-8 and 1 shared. The multi-token
		// prediction layer (num_nextn_predict_layers 1, 14B) is not counted.
		// DeepSeek-R1 shares this architecture.
		Description: "DeepSeek-V3 671B: 61 layers, MLA, 256 experts top-8 + 1 shared (37B active), FP8, 160k context",
		Params:      671_026_404_352, Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192,
		Intermediate: 18432, Vocab: 129280, MaxContext: 163840, DTypeBytes: 2,
		Experts: 256, ExpertsPerToken: 8, MoEIntermediate: 2048, SharedExperts: 1, DenseLayers: 3,
		KVLoRARank: 512, QLoRARank: 1536, QKRopeHeadDim: 64, QKNopeHeadDim: 128, VHeadDim: 128, WeightBits: 8,
		Source: "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json",
	},
}

// gpus are the accelerators that ship with itlsim. Rates are datasheet
// peaks: dense tensor throughput (the "with sparsity" figures are twice
// these), memory bandwidth, and links given per direction (datasheets quote
// NVLink and PCIe bidirectionally, i.e. twice these).
var gpus = map[string]GPUSpec{
	"a100-40gb": {
		// A100 SXM4 40GB: BF16 tensor 312 TFLOPS dense (624 sparse), no FP8;
		// HBM2 1,555 GB/s; NVLink 3 600 GB/s bidirectional; PCIe Gen4 x16
		// 64 GB/s bidirectional.
		MemoryBytes: 40 * gib, PeakFLOPS: 312e12, MemBandwidth: 1555e9,
		InterconnectBW: 300e9, HostLinkBW: 32e9,
		Source: "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
	},
	"a100-80gb": {
		// A100 SXM4 80GB: as a100-40gb but HBM2e 2,039 GB/s. Vidur's and
		// Sarathi-Serve's "A100" profiles are this part.
		MemoryBytes: 80 * gib, PeakFLOPS: 312e12, MemBandwidth: 2039e9,
		InterconnectBW: 300e9, HostLinkBW: 32e9,
		Source: "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)",
	},
	"h100-sxm-80gb": {
		// H100 SXM5 80GB: BF16 tensor 989 TFLOPS dense (1,979 sparse), FP8
		// 1,979 dense (3,958 sparse); HBM3 3.35 TB/s; NVLink 4 900 GB/s
		// bidirectional; PCIe Gen5 x16 128 GB/s bidirectional.
		// The driver reports 79.19 GiB in all (vLLM 0.19.0's "worker init
		// memory snapshot ... total_memory=79.19GiB", llm-d-planner's
		// accuracy logs, see sim/cost/memory_test.go).
		MemoryBytes: 80 * gib, DeviceMemoryBytes: 7919 * gib / 100,
		PeakFLOPS: 989.4e12, PeakFP8FLOPS: 1978.9e12, MemBandwidth: 3.35e12,
		InterconnectBW: 450e9, HostLinkBW: 64e9,
		Source: "NVIDIA H100 Tensor Core GPU datasheet (h100-datasheet-2430615), SXM column",
	},
	"h200-141gb": {
		// H200 SXM 141GB: H100 compute (BF16 989 TFLOPS dense, FP8 1,979
		// dense); HBM3e 4.8 TB/s; NVLink 900 GB/s bidirectional; PCIe Gen5
		// 128 GB/s bidirectional.
		MemoryBytes: 141 * gib, PeakFLOPS: 989.4e12, PeakFP8FLOPS: 1978.9e12, MemBandwidth: 4.8e12,
		InterconnectBW: 450e9, HostLinkBW: 64e9,
		Source: "NVIDIA H200 Tensor Core GPU datasheet, SXM column",
	},
	"b200-180gb": {
		// HGX B200 (1,000 W), per GPU: BF16 tensor 2.25 PFLOPS dense (4.5
		// sparse), FP8 4.5 dense (9 sparse), FP4 9 dense (not modelled);
		// 180 GB HBM3e at 8 TB/s; NVLink 5 1.8 TB/s bidirectional; PCIe
		// Gen5 x16 128 GB/s bidirectional to the host.
		MemoryBytes: 180 * gib, PeakFLOPS: 2250e12, PeakFP8FLOPS: 4500e12, PeakFP4FLOPS: 9000e12, MemBandwidth: 8e12,
		InterconnectBW: 900e9, HostLinkBW: 64e9,
		Source: "NVIDIA HGX B200 datasheet (HGX B200 column, per GPU = 8-GPU figures / 8), read 2026-12",
	},
	"gb200": {
		// One Blackwell GPU of a GB200 NVL72 rack (72 GPUs, 36 Grace
		// CPUs): the rack's FP4 1,440 / FP8 720 / BF16 360 PFLOPS (with
		// sparsity) are 10 / 5 / 2.5 PFLOPS dense per GPU; 13.4 TB HBM3e
		// at 576 TB/s are 186 GB at 8 TB/s per GPU; NVLink 5 1.8 TB/s
		// bidirectional to all 72 GPUs of the rack (one NVLink domain);
		// NVLink-C2C to its Grace CPU 900 GB/s bidirectional; one
		// ConnectX-7 400 Gb/s NIC per GPU to the scale-out network.
		MemoryBytes: 186 * gib, PeakFLOPS: 2500e12, PeakFP8FLOPS: 5000e12, PeakFP4FLOPS: 10000e12, MemBandwidth: 8e12,
		InterconnectBW: 900e9, HostLinkBW: 450e9, ScaleUpGPUs: 72, ScaleOutBW: 50e9,
		Source: "NVIDIA GB200 NVL72 specifications (https://www.nvidia.com/en-us/data-center/gb200-nvl72/), rack figures / 72, read 2026-12",
	},
	"h20": {
		// NVIDIA H20 (HGX, Hopper GH100 cut for export): 96 GB HBM3 at
		// 4.0 TB/s; BF16 tensor 148 TFLOPS dense, FP8 296 dense; NVLink 4
		// 900 GB/s bidirectional; PCIe Gen5 x16. NVIDIA publishes no
		// public datasheet page for it: the figures are those of its
		// partner specification as reported.
		MemoryBytes: 96 * gib, PeakFLOPS: 148e12, PeakFP8FLOPS: 296e12, MemBandwidth: 4.0e12,
		InterconnectBW: 450e9, HostLinkBW: 64e9,
		Source: "NVIDIA HGX H20 specification as reported (no public NVIDIA page), e.g. https://willitrunai.com/gpus/h20-96gb, read 2026-12",
	},
	"mi325x": {
		// AMD Instinct MI325X 256GB HBM3E at 6 TB/s; MI300X compute (BF16
		// 1,307.4 TFLOPS dense, FP8 2,614.9 dense); Infinity Fabric 7
		// links, 896 GB/s aggregate (448 GB/s per direction); PCIe Gen5.
		MemoryBytes: 256 * gib, PeakFLOPS: 1307.4e12, PeakFP8FLOPS: 2614.9e12, MemBandwidth: 6e12,
		InterconnectBW: 448e9, HostLinkBW: 64e9,
		Source: "AMD Instinct MI325X accelerator specifications (https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html), read 2026-12",
	},
	"mi355x": {
		// AMD Instinct MI355X (CDNA 4) 288GB HBM3E at 8 TB/s; BF16 matrix
		// 2.5 PFLOPS dense (2,516.6 TFLOPS), FP8 5.0 (5,033.2), MXFP4 10
		// (10,066.3); Infinity Fabric 7 links × 153.6 GB/s bidirectional
		// (1,075 GB/s aggregate, 537.6 per direction); PCIe Gen5 x16.
		MemoryBytes: 288 * gib, PeakFLOPS: 2516.6e12, PeakFP8FLOPS: 5033.2e12, PeakFP4FLOPS: 10066.3e12, MemBandwidth: 8e12,
		InterconnectBW: 537.6e9, HostLinkBW: 64e9,
		Source: "AMD Instinct MI355X accelerator specifications (https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html), read 2026-12",
	},
	"rtx-pro-6000": {
		// NVIDIA RTX PRO 6000 Blackwell Server Edition: 96 GB GDDR7 at
		// 1,792 GB/s; "4,000 AI TOPS" FP4 with sparsity, so 2,000
		// TFLOPS dense FP4; FP8 1,000 and BF16 500 dense are derived (each
		// format halving the next, as on every Blackwell part), not
		// printed in the datasheet. No NVLink: peers and host share PCIe
		// Gen5 x16, 64 GB/s per direction.
		MemoryBytes: 96 * gib, PeakFLOPS: 500e12, PeakFP8FLOPS: 1000e12, PeakFP4FLOPS: 2000e12, MemBandwidth: 1792e9,
		InterconnectBW: 64e9, HostLinkBW: 64e9,
		Source: "NVIDIA RTX PRO 6000 Blackwell Server Edition (https://www.nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition/), read 2026-12; fp8 and bf16 derived from the fp4 figure",
	},
	"l40s": {
		// L40S 48GB GDDR6: BF16 tensor 362.05 TFLOPS dense (733 sparse), FP8
		// 733 dense (1,466 sparse); 864 GB/s; no NVLink: peers and host share
		// PCIe Gen4 x16, 64 GB/s bidirectional.
		MemoryBytes: 48 * gib, PeakFLOPS: 362.05e12, PeakFP8FLOPS: 733e12, MemBandwidth: 864e9,
		InterconnectBW: 32e9, HostLinkBW: 32e9,
		Source: "NVIDIA L40S datasheet",
	},
	"mi300x": {
		// AMD Instinct MI300X 192GB HBM3: BF16 matrix 1,307.4 TFLOPS dense,
		// FP8 2,614.9 dense; 5.3 TB/s; Infinity Fabric 7 links × 128 GB/s
		// bidirectional (896 GB/s aggregate, 448 GB/s per direction; RCCL
		// rings use all links in an 8-GPU platform); PCIe Gen5 x16.
		MemoryBytes: 192 * gib, PeakFLOPS: 1307.4e12, PeakFP8FLOPS: 2614.9e12, MemBandwidth: 5.3e12,
		InterconnectBW: 448e9, HostLinkBW: 64e9,
		Source: "AMD Instinct MI300X accelerator data sheet",
	},
}

// LookupModel returns the preset named name (case-insensitive) with its Name
// filled in.
func LookupModel(name string) (ModelSpec, bool) {
	key := strings.ToLower(name)
	m, ok := models[key]
	if !ok {
		return ModelSpec{}, false
	}
	m.Name = key
	return m, true
}

// ModelNames lists the model presets, sorted.
func ModelNames() []string { return sortedKeys(models) }

// LookupGPU returns the preset named name (case-insensitive) with its Name
// filled in.
func LookupGPU(name string) (GPUSpec, bool) {
	key := strings.ToLower(name)
	g, ok := gpus[key]
	if !ok {
		return GPUSpec{}, false
	}
	g.Name = key
	return g, true
}

// GPUNames lists the GPU presets, sorted.
func GPUNames() []string { return sortedKeys(gpus) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Price is an on-demand rental price of one GPU.
type Price struct {
	// USDPerGPUHour is US dollars per GPU per hour, on demand.
	USDPerGPUHour float64
	// Source says where the figure comes from and when it was read.
	Source string
}

// priceSource is the one public price survey the presets' prices come
// from, so they are comparable with each other.
const priceSource = "midpoint of the specialty-provider on-demand range in Mercatus, \"Cloud GPU pricing\" (https://www.mercatus-ai.com/blog/cloud-gpu-pricing), May 2026"

// gpuPrices are on-demand prices for the GPU presets the survey covers.
// Prices move month by month and differ several-fold between providers:
// these are a reference point for comparing configurations, to be
// replaced by one's own (itlsim capacity --gpu-price NAME=USD). A preset
// not listed has no price.
var gpuPrices = map[string]Price{
	"a100-80gb":     {USDPerGPUHour: 1.30, Source: priceSource}, // A100 80GB: $1.10–$1.50
	"h100-sxm-80gb": {USDPerGPUHour: 3.00, Source: priceSource}, // H100 SXM5: $2.50–$3.50
	"h200-141gb":    {USDPerGPUHour: 4.00, Source: priceSource}, // H200 SXM5: $3.50–$4.50
	// The survey has no B200 or MI300X row; these come from one provider's
	// list and one cross-provider median, so compare them with care.
	"b200-180gb": {USDPerGPUHour: 6.03, Source: "Spheron on-demand B200 SXM price as of 17 March 2026 (https://www.spheron.network/blog/nvidia-h200-vs-b200-vs-gb200)"},
	"mi300x":     {USDPerGPUHour: 1.99, Source: "median on-demand MI300X price over neoclouds and hyperscalers, Cliff Center research note 2026-05-18 (https://www.cliffcenter.com/research/amd-inference-economics)"},
	// GB200 rents by the Superchip (one Grace CPU, two GPUs): $9.08/h.
	"gb200": {USDPerGPUHour: 4.54, Source: "Spheron on-demand GB200 Superchip price ($9.08/h for 2 GPUs) as of 17 March 2026 (https://www.spheron.network/blog/nvidia-h200-vs-b200-vs-gb200)"},
	// h20, mi325x, mi355x and rtx-pro-6000 have no public on-demand
	// price in the sources above.
}

// GPUPrice returns the on-demand price of the GPU preset named name
// (case-insensitive); false when the preset has none.
func GPUPrice(name string) (Price, bool) {
	p, ok := gpuPrices[strings.ToLower(name)]
	return p, ok
}
