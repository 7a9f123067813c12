package cost

import (
	"fmt"
	"math"
)

// RooflineConfig holds the few numbers the roofline cannot derive from
// datasheets: how much of the peak real kernels sustain and what fixed costs
// they pay. One set of defaults serves every model and GPU. They come from
// the public measurements check.go compares with: the efficiencies and
// kernel overheads from H100 kernel latencies and A100 layer profiles, the
// all-reduce latency from Vidur's collective profile. OverheadUS is a round
// figure for vLLM V1's CPU work per step; with the rest it puts the
// Llama-3.3-70B TP8 decode step within 10 % of the ITL vLLM measured, the
// only end-to-end point available, which is therefore a calibration as much
// as a check.
type RooflineConfig struct {
	// ComputeEfficiency is the fraction of the dense tensor peak that large
	// GEMMs and prefill attention sustain. (0,1]; default 0.70 (cuBLAS bf16
	// on A100 and DeepGEMM fp8 / FlashAttention-3 on H100 reach 0.62-0.77).
	ComputeEfficiency float64 `yaml:"compute_efficiency" json:"compute_efficiency"`
	// MemoryEfficiency is the fraction of memory bandwidth sustained when
	// streaming weights and KV cache. (0,1]; default 0.85 (A100 GEMMs at one
	// token: 0.78-0.85; H100 decode attention over long contexts: 0.93-0.96).
	MemoryEfficiency float64 `yaml:"memory_efficiency" json:"memory_efficiency"`
	// KernelOverheadUS is the fixed time of one GEMM or elementwise kernel in
	// microseconds: launch gap, first wave and tail that no bandwidth hides.
	// It bounds small shapes from below. ≥ 0; default 4.
	KernelOverheadUS float64 `yaml:"kernel_overhead_us" json:"kernel_overhead_us"`
	// AttentionOverheadUS is the fixed time of one attention kernel call in
	// microseconds (split-KV scheduling, the combine pass), charged once per
	// layer per step. ≥ 0; default 18 (FlashInfer decode on H100: 17-24 µs floor).
	AttentionOverheadUS float64 `yaml:"attention_overhead_us" json:"attention_overhead_us"`
	// AllReduceLatencyUS is the fixed time of one tensor-parallel all-reduce
	// in microseconds, whatever its size. ≥ 0; default 25 (Vidur's 8×H100
	// profile: 23-37 µs for messages up to 128 KiB).
	AllReduceLatencyUS float64 `yaml:"all_reduce_latency_us" json:"all_reduce_latency_us"`
	// AllReduceEfficiency is the fraction of the GPU's interconnect bandwidth
	// a ring all-reduce sustains (NCCL bus bandwidth / link peak). (0,1];
	// default 0.80.
	AllReduceEfficiency float64 `yaml:"all_reduce_efficiency" json:"all_reduce_efficiency"`
	// OverheadUS is the fixed time of every step in microseconds that is not
	// GPU kernel time on the critical path: scheduling, input preparation,
	// embedding lookup, sampling and output processing. ≥ 0; default 1000.
	OverheadUS float64 `yaml:"overhead_us" json:"overhead_us"`
	// SeqOverheadUS is the fixed time per sequence in a step, in
	// microseconds, on the critical path beside the kernels: preparing its
	// inputs, sampling its token, processing its output (vLLM V1's engine
	// core does this per request every step). ≥ 0; default 0 (off); a
	// calibration (`itlsim calibrate`) fits it.
	SeqOverheadUS float64 `yaml:"seq_overhead_us" json:"seq_overhead_us"`
	// GraphKernelOverheadUS is KernelOverheadUS for a kernel replayed in a
	// CUDA graph, in microseconds: the host no longer launches it, so what
	// is left is the GPU's own gap between dependent kernels and the first
	// wave and tail. It applies only when CUDA graphs are on (sim's
	// cost.enforce_eager false). ≥ 0; default 1 (see docs/fidelity.md, "CUDA
	// graphs").
	GraphKernelOverheadUS float64 `yaml:"graph_kernel_overhead_us" json:"graph_kernel_overhead_us"`
	// MoERoutingZipf skews a MoE model's expert routing: expert i (in the
	// config's order) receives a share of the routed rows proportional to
	// (i+1)^−s. 0 (the default) routes uniformly. [0,4]. See routing.go.
	MoERoutingZipf float64 `yaml:"moe_routing_zipf,omitempty" json:"moe_routing_zipf,omitempty"`
	// MoEExpertLoad is a measured load per routed expert (any scale: counts
	// or shares, one entry per expert in the config's order), replacing
	// MoERoutingZipf. Empty: not given.
	MoEExpertLoad []float64 `yaml:"moe_expert_load,omitempty" json:"moe_expert_load,omitempty"`
}

// DefaultRoofline returns the calibrated defaults (see the field docs).
func DefaultRoofline() RooflineConfig {
	return RooflineConfig{
		ComputeEfficiency:   0.70,
		MemoryEfficiency:    0.85,
		KernelOverheadUS:    4,
		AttentionOverheadUS: 18,
		AllReduceLatencyUS:  25,
		AllReduceEfficiency: 0.80,
		OverheadUS:          1000,

		GraphKernelOverheadUS: 1,
	}
}

// maxOverheadUS bounds the fixed-cost fields: one second is far beyond any
// real kernel or step overhead and keeps step times inside int64.
const maxOverheadUS = 1e6

// Validate reports the first field with an impossible value.
func (c RooflineConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"compute_efficiency", c.ComputeEfficiency},
		{"memory_efficiency", c.MemoryEfficiency},
		{"all_reduce_efficiency", c.AllReduceEfficiency},
	} {
		if !(f.v > 0 && f.v <= 1) {
			return fmt.Errorf("roofline.%s: must be in (0,1], got %g", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"kernel_overhead_us", c.KernelOverheadUS},
		{"attention_overhead_us", c.AttentionOverheadUS},
		{"all_reduce_latency_us", c.AllReduceLatencyUS},
		{"overhead_us", c.OverheadUS},
		{"seq_overhead_us", c.SeqOverheadUS},
		{"graph_kernel_overhead_us", c.GraphKernelOverheadUS},
	} {
		if !(f.v >= 0 && f.v <= maxOverheadUS) {
			return fmt.Errorf("roofline.%s: must be in [0,%g] µs, got %g", f.name, float64(maxOverheadUS), f.v)
		}
	}
	return c.validateRouting()
}

// Kernels prices single operators on one GPU: each combines
// FLOPs / sustained compute with bytes / sustained bandwidth (see roof) and
// adds its fixed overhead. [Roofline] builds every step from these prices, so they are what
// validation against measured kernels checks. Times are float nanoseconds.
type Kernels struct {
	flopsPerNS float64 // sustained FLOP per ns: peak × ComputeEfficiency / 1e9
	bytesPerNS float64 // sustained bytes per ns: bandwidth × MemoryEfficiency / 1e9
	kernelNS   float64 // KernelOverheadUS in ns
	attnNS     float64 // AttentionOverheadUS in ns
	opBytes    float64 // bytes per GEMM input element
	wBytes     float64 // bytes per weight element
	actBytes   float64 // bytes per activation element written by kernels
	kvBytes    float64 // bytes per KV-cache element
	tileRows   float64 // GEMM output-tile height (gemmTileRows or wnaTileRows)
	peak       float64 // the dense peak FLOP/s the GEMMs run at (PeakFLOPS or PeakFP8FLOPS)
}

// NewKernels prices operators on g for weights of dtypeBytes bytes (1 = fp8,
// 2 = bf16/fp16, 4 = fp32): fp8 GEMMs run at the GPU's fp8 peak, others at its
// bf16 peak. Activations are 16-bit unless the weights are wider.
func NewKernels(g GPUSpec, dtypeBytes int, cfg RooflineConfig) (Kernels, error) {
	if err := g.Validate(); err != nil {
		return Kernels{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Kernels{}, err
	}
	if dtypeBytes != 1 && dtypeBytes != 2 && dtypeBytes != 4 {
		return Kernels{}, fmt.Errorf("dtype_bytes: must be 1, 2 or 4, got %d", dtypeBytes)
	}
	peak := g.PeakFor(dtypeBytes)
	if !(peak > 0) {
		return Kernels{}, fmt.Errorf("gpu %s: no %d-byte tensor throughput (peak_fp8_flops is 0)", g.Name, dtypeBytes)
	}
	return Kernels{
		flopsPerNS: peak * cfg.ComputeEfficiency / 1e9,
		bytesPerNS: g.MemBandwidth * cfg.MemoryEfficiency / 1e9,
		kernelNS:   cfg.KernelOverheadUS * 1e3,
		attnNS:     cfg.AttentionOverheadUS * 1e3,
		opBytes:    float64(dtypeBytes),
		wBytes:     float64(dtypeBytes),
		actBytes:   float64(max(dtypeBytes, 2)),
		kvBytes:    float64(dtypeBytes),
		tileRows:   gemmTileRows,
		peak:       peak,
	}, nil
}

// kernelsFor prices operators for m's weights on g: as [NewKernels] for
// m.DTypeBytes unless m is quantized (WeightBits set). Then fp8 weights run
// at the fp8 peak with fp8 inputs (W8A8) where g has fp8 tensor cores, and
// otherwise (A100, int4) at the bf16 peak with 16-bit inputs, saving only
// weight bytes (W8A16/W4A16 kernels dequantize in registers). The KV cache
// holds m.KVElementBytes per element.
func kernelsFor(m ModelSpec, g GPUSpec, cfg RooflineConfig) (Kernels, error) {
	if m.WeightBits == 0 {
		k, err := NewKernels(g, m.DTypeBytes, cfg)
		k.kvBytes = float64(m.KVElementBytes())
		return k, err
	}
	k, err := NewKernels(g, max(m.DTypeBytes, 2), cfg)
	if err != nil {
		return k, err
	}
	k.wBytes = float64(m.WeightBits) / 8
	switch {
	case m.WeightBits == 8 && g.PeakFP8FLOPS > 0:
		k.flopsPerNS = g.PeakFP8FLOPS * cfg.ComputeEfficiency / 1e9
		k.peak = g.PeakFP8FLOPS
		k.opBytes = 1
	case m.WeightBits == 4 && m.WeightFP4 && g.PeakFP4FLOPS > 0:
		k.flopsPerNS = g.PeakFP4FLOPS * cfg.ComputeEfficiency / 1e9
		k.peak = g.PeakFP4FLOPS
		k.opBytes = 0.5
	default:
		k.tileRows = wnaTileRows
	}
	k.kvBytes = float64(m.KVElementBytes())
	return k, nil
}

// gemmShape holds one weight matrix's per-m coefficients so that pricing it
// for a token count is a handful of float operations.
type gemmShape struct {
	flopsPerRow  float64 // 2·k·n: the FLOPs of one row, untiled
	flopNSPerRow float64 // 2·k·n / sustained FLOP per ns
	weightNS     float64 // k·n weight bytes / sustained bytes per ns
	rowNS        float64 // bytes of one input row and one output row / bytes per ns
}

func (k Kernels) shape(kk, n int) gemmShape {
	fk, fn := float64(kk), float64(n)
	return gemmShape{
		flopsPerRow:  2 * fk * fn,
		flopNSPerRow: 2 * fk * fn / k.flopsPerNS,
		weightNS:     fk * fn * k.wBytes / k.bytesPerNS,
		rowNS:        (fk*k.opBytes + fn*k.actBytes) / k.bytesPerNS,
	}
}

// gemmTileRows is the output-tile height of tensor-core GEMM kernels (cuBLAS,
// CUTLASS and DeepGEMM use BLOCK_M = 128 for these shapes). A partly filled
// tile costs a whole one ("tile quantization"), so the compute side of a GEMM
// grows in steps of 128 rows: Vidur's A100 profile jumps by 40 % between 128
// and 136 tokens, and the roofline follows.
const gemmTileRows = 128

// wnaTileRows is the output-tile height of the weight-only quantized GEMMs
// (W4A16, W8A16) vLLM runs for int4 checkpoints and for fp8 weights on GPUs
// without fp8 tensor cores: Marlin and its MoE variant tile M by 16, so a
// small batch does not pay a 128-row tile's compute.
const wnaTileRows = 16

func (k Kernels) gemm(s gemmShape, m float64) float64 {
	if m <= 0 {
		return 0
	}
	tiles := math.Ceil(m/k.tileRows) * k.tileRows
	return max(tiles*s.flopNSPerRow, roof(m*s.flopNSPerRow, s.weightNS+m*s.rowNS)) + k.kernelNS
}

// moeGEMM prices one grouped GEMM over the routed experts of a MoE layer
// for m tokens, s being one expert's shape: each token runs topK of
// experts, so under uniform routing the step touches
// D = E·(1−(1−k/E)^m) distinct experts (k at m = 1, nearly E at large m)
// whose weights are read once; the m·k rows split evenly over them, each
// expert's rows rounded up to whole 128-row tiles (the grouped kernel's
// floor per expert). One kernel's fixed overhead.
func (k Kernels) moeGEMM(s gemmShape, m, experts, topK float64) float64 {
	if m <= 0 {
		return 0
	}
	d := experts * (1 - math.Pow(1-topK/experts, m))
	d = min(max(d, topK), experts)
	return k.moeGEMMRows(s, m*topK, d)
}

// moeGEMMRows prices a grouped GEMM of rows (token, expert) rows over d
// distinct experts of shape s: d experts' weights read once, each expert's
// rows rounded up to whole tiles, one kernel's fixed overhead.
func (k Kernels) moeGEMMRows(s gemmShape, rows, d float64) float64 {
	tiles := d * math.Ceil(rows/d/k.tileRows) * k.tileRows
	return max(tiles*s.flopNSPerRow, roof(rows*s.flopNSPerRow, d*s.weightNS+rows*s.rowNS)) + k.kernelNS
}

// roof combines a kernel's compute time and memory time. It is a smooth
// maximum, √(c²+m²): the larger term when one dominates, up to √2 times it
// when they balance. Measured kernels near the ridge point are slower than
// either bound alone (Vidur's A100 GEMMs at 64-128 tokens: 1.35× the larger),
// because no kernel overlaps its loads and its math perfectly.
func roof(compute, memory float64) float64 {
	return math.Sqrt(compute*compute + memory*memory)
}

// GEMMNS prices C[m×n] = A[m×k]·B[k×n] with B the weight matrix: 2·m'·k·n
// FLOPs, m' being m rounded up to whole 128-row tiles, against reading A and
// B and writing C once, plus KernelOverheadUS.
func (k Kernels) GEMMNS(m, kk, n int) float64 {
	return k.gemm(k.shape(kk, n), float64(m))
}

// DecodeAttentionNS prices one decode attention kernel call: batch sequences
// each with one query token over kvLen cached tokens. Heads are those on this
// GPU (the model's totals divided by the tensor-parallel degree). Cost:
// 4·qHeads·headDim FLOPs per (query, key) pair against reading every K and V
// entry once, plus AttentionOverheadUS.
func (k Kernels) DecodeAttentionNS(batch, kvLen, qHeads, kvHeads, headDim int) float64 {
	if batch <= 0 || kvLen <= 0 {
		return 0
	}
	b, l := float64(batch), float64(kvLen)
	q, kv, d := float64(qHeads), float64(kvHeads), float64(headDim)
	flops := 4 * q * d * b * l
	bytes := b*l*2*kv*d*k.kvBytes + b*2*q*d*k.actBytes
	return roof(flops/k.flopsPerNS, bytes/k.bytesPerNS) + k.attnNS
}

// PrefillAttentionNS prices causal attention over one fresh sequence of
// seqLen tokens (FlashAttention-style: seqLen·(seqLen+1)/2 pairs at
// 4·qHeads·headDim FLOPs each; Q, K, V read and O written once). Heads are
// per GPU. Plus AttentionOverheadUS.
func (k Kernels) PrefillAttentionNS(seqLen, qHeads, kvHeads, headDim int) float64 {
	if seqLen <= 0 {
		return 0
	}
	s := float64(seqLen)
	q, kv, d := float64(qHeads), float64(kvHeads), float64(headDim)
	flops := 4 * q * d * s * (s + 1) / 2
	bytes := s * (2*q*d*k.actBytes + 2*kv*d*k.kvBytes)
	return roof(flops/k.flopsPerNS, bytes/k.bytesPerNS) + k.attnNS
}

// elementwiseKernels is how many non-GEMM, non-attention kernels a layer
// launches in vLLM: two fused residual-add + RMSNorm, rotary embedding,
// SiLU-and-multiply, and the KV-cache write.
const elementwiseKernels = 5

// Roofline is the first-principles step model for one model served on tp
// GPUs of one kind with tensor parallelism (Megatron-LM split: q/k/v and the
// MLP's gate/up column-parallel, o and down row-parallel, two all-reduces
// per layer). A step is priced, per GPU, as the sum of:
//
//   - linear: per layer the qkv, o, gate_up and down GEMMs at m = tokens, and
//     the lm_head GEMM at m = sequences (logits are computed for each
//     sequence's last token only). Each GEMM is compute- or memory-bound on
//     its own; the weights are read once per step whatever the batch size,
//     which is why decode steps cost about WeightBytes/tp / bandwidth.
//   - attention: one kernel call per layer; prefill chunks are priced on
//     Σ causal pairs (compute) against Σ context read (memory), decoding
//     sequences on Σ context; the two add.
//   - elementwise: norms, rotary embedding, activation and KV writes as bytes
//     per token plus five kernels' fixed cost per layer.
//   - all-reduce: with tp > 1, 2·layers + 2 (the embedding and logits
//     collectives) ring all-reduces of tokens·hidden activations, each
//     2(tp−1)/tp·bytes / (interconnect × efficiency) plus a fixed latency.
//   - OverheadUS once per step, SeqOverheadUS once per sequence in it.
//
// Not modelled: overlap between phases or between GPUs (none is assumed,
// so dispatch and combine do not hide behind the expert GEMMs), pipeline
// parallelism, quantized KV scales. Skewed expert routing is the
// configuration's (see routing.go). Data and expert
// parallelism: see [NewRooflineParallel].
//
// Mixture-of-experts layers price the routed experts as two grouped GEMMs
// over the distinct experts a step's tokens touch under uniform routing
// (see moeGEMM); MLA attention is priced absorbed, on the cached latent.
type Roofline struct {
	Kernels

	model ModelSpec
	gpu   GPUSpec
	tp    int
	cfg   RooflineConfig
	name  string

	layers               float64
	qkv, o, gateUp, down gemmShape
	lmHead               gemmShape

	// Mixture of experts: moeLayers of the layers replace gateUp and down
	// by the router, the shared experts and the routed experts' grouped
	// GEMMs (expGateUp, expDown: one expert's shapes at its weight width).
	denseLayers, moeLayers float64
	experts, topK          float64
	router                 gemmShape
	sharedGateUp           gemmShape
	sharedDown             gemmShape
	expGateUp, expDown     gemmShape
	hasShared              bool
	route                  routing // skewed expert routing (uniform: route.skewed false)
	moeEWDeltaNSPerToken   float64 // elementwise bytes a MoE layer adds over a dense one

	// Multi-head latent attention: the q (q_a, q_b) and kv (kv_a, kv_b)
	// projections that replace qkv.
	mla              bool
	qA, qB, kvA, kvB gemmShape

	attnFixedNS           float64 // layers × AttentionOverheadUS
	attnFLOPNSPerPair     float64 // ns of compute per causal pair, all full-attention layers
	kvReadNSPerToken      float64 // ns of bandwidth per KV entry read, all full-attention layers
	window                float64 // sliding window in tokens; 0 without sliding-window layers
	swPairNS, swKVNS      float64 // the same two rates over the sliding-window layers
	qoNSPerToken          float64 // ns of bandwidth for one query row in and out, all layers
	elementwiseFixedNS    float64 // layers × 5 kernels × KernelOverheadUS
	elementwiseNSPerToken float64
	allReduceFixedNS      float64 // count × latency
	allReduceNSPerToken   float64 // count × ring time of one token's activations
	overheadNS            float64
	seqOverheadNS         float64

	// CUDA graphs (WithCUDAGraphs): the captured sizes, ascending (nil:
	// eager), the GEMM kernels of all layers, and what a graph saves per
	// kernel (KernelOverheadUS − GraphKernelOverheadUS, in ns).
	graphSizes  []int
	layerGEMMs  float64
	graphSaveNS float64

	work workRates // a step's FLOPs and bytes, per GPU (see StepWork)

	// Data-parallel attention and expert parallelism (see
	// NewRooflineParallel); group is false for plain tensor parallelism.
	group        bool
	dp           int
	ep           bool
	gpus         float64 // tp × dp: the expert group
	localExperts float64 // experts per GPU with ep
	maxLoadZ     float64 // √(2 ln gpus): the busiest GPU's excess in standard deviations
	a2aFixedNS   float64 // one MoE layer's dispatch and combine latencies
	a2aNSPerRow  float64 // one MoE layer's dispatch and combine time per routed row
	expertShards float64 // GPUs one expert's weights are split over: tp, 1 with ep, tp×dp without
}

// workRates are the coefficients of a step's work on one GPU, read off the
// same shapes and per-token terms that price it.
type workRates struct {
	flopsPerToken                float64 // every layer's GEMMs (routed experts: topK of them)
	expertFLOPs                  float64 // the routed experts' share of flopsPerToken
	expertRowB                   float64 // the routed experts' share of bytesPerToken
	flopsPerSeq                  float64 // the lm_head GEMM
	flopsPerPair                 float64 // attention, per (query, key) pair, all layers
	weightBytes                  float64 // weights every step reads (all but the routed experts)
	expertBytes                  float64 // one routed expert's weights, all MoE layers
	bytesPerToken                float64 // GEMM input and output rows, elementwise traffic and KV writes
	bytesPerSeq                  float64 // the lm_head's rows
	bytesPerKV                   float64 // one cached token's K and V (or latent) read, all full-attention layers
	swFlopsPerPair, swBytesPerKV float64 // the same over the sliding-window layers
	bytesPerQuery                float64 // one query row in and out of attention, all layers
}

// NewRoofline builds the step model for m served on tp GPUs g. It fails when
// the specs or cfg are invalid, when tp does not split the query heads or the
// MLP evenly, or when the KV heads can neither be split nor replicated (vLLM
// replicates them when tp is a multiple of KVHeads).
func NewRoofline(m ModelSpec, g GPUSpec, tp int, cfg RooflineConfig) (*Roofline, error) {
	return NewRooflineParallel(m, g, Parallelism{TP: tp}, cfg)
}

// Parallelism is how one replica splits a model over its GPUs.
type Parallelism struct {
	// TP is the tensor-parallel degree of attention (of everything in a
	// dense model): the GPUs of one data-parallel rank.
	TP int
	// DP is the data-parallel attention degree (vLLM
	// --data-parallel-size): DP ranks of TP GPUs each, each rank with its
	// own batch and KV cache, sharing the experts. 0 or 1: none. Only a
	// MoE model's ranks step together; a dense model's are replicas.
	DP int
	// ExpertParallel places whole routed experts on the TP×DP GPUs (vLLM
	// --enable-expert-parallel) instead of splitting every expert over
	// them by tensor parallelism.
	ExpertParallel bool
}

// Ranks is the data-parallel degree, at least 1.
func (p Parallelism) Ranks() int { return max(p.DP, 1) }

// GPUs is TP × DP.
func (p Parallelism) GPUs() int { return p.TP * p.Ranks() }

// Group reports whether the experts span more than one rank's
// tensor-parallel split: data parallelism or expert parallelism.
func (p Parallelism) Group() bool { return p.Ranks() > 1 || p.ExpertParallel }

// Validate checks p against m (its tensor-parallel degree is checked by
// the caller).
func (p Parallelism) Validate(m ModelSpec) error {
	g := p.GPUs()
	switch {
	case p.DP < 0 || p.DP > 1024:
		return fmt.Errorf("dp: must be in [1,1024], got %d", p.DP)
	case g > 1<<16:
		return fmt.Errorf("dp: tp × dp = %d GPUs, more than %d", g, 1<<16)
	case p.Ranks() > 1 && !m.IsMoE():
		return fmt.Errorf("dp: %s is a dense model, whose data-parallel ranks run independently: give them as cluster.replicas %d with cluster.router.policy vllm-dp", m.Name, p.Ranks())
	case p.ExpertParallel && !m.IsMoE():
		return fmt.Errorf("enable_expert_parallel: %s has no experts", m.Name)
	case p.ExpertParallel && m.Experts%g != 0:
		return fmt.Errorf("enable_expert_parallel: tp × dp = %d GPUs do not split %s's %d experts evenly", g, m.Name, m.Experts)
	case p.Group() && !p.ExpertParallel && m.MoEIntermediate%g != 0:
		return fmt.Errorf("dp: tp × dp = %d does not divide %s's expert intermediate size %d (try enable_expert_parallel)", g, m.Name, m.MoEIntermediate)
	}
	return nil
}

// NewRooflineParallel is [NewRoofline] for a replica of p.TP × p.DP GPUs.
// With p.DP > 1 (a MoE model) the batch it prices is the whole
// data-parallel group's: the ranks step in lockstep, because vLLM aligns
// their forward passes for MoE models and runs a dummy pass on a rank
// with nothing scheduled so that every rank joins each layer's expert
// collectives (docs.vllm.ai, serving/data_parallel_deployment). A step
// then lasts as long as its busiest rank's: the sequences split as evenly
// as whole sequences can, ⌈n/DP⌉ per rank (prefill and decode apart, each
// of the average size), and attention, the dense layers, the shared
// experts and the tensor-parallel all-reduces are priced on that share.
//
// The routed experts are priced on the group's tokens T. With
// ExpertParallel each GPU holds E/(TP·DP) whole experts and receives the
// (token, expert) rows routed to them; under uniform routing the T·k rows
// fall on the G = TP·DP GPUs as a binomial, whose expected maximum is
// taken as μ + σ·√(2 ln G), μ = T·k/G, σ² = μ·(1 − 1/G) (the Gaussian
// bound on the largest of G draws), at most T·k. The busiest GPU runs
// its grouped GEMMs on those rows and receives them (dispatch) and sends
// them back (combine) over the interconnect: the share (min(G, S) − 1)/G
// of each row over NVLink / Infinity Fabric (S = ScaleUpGPUs), the share
// (G − min(G, S))/G over the scale-out network, each at
// AllReduceEfficiency of its bandwidth, plus the GPU's all-to-all latency
// twice. Without ExpertParallel every expert is split over the G GPUs
// by tensor parallelism: each GPU runs all T tokens through its slices,
// after an all-gather of their hidden states and before a reduce-scatter
// (vLLM's allgather_reducescatter), priced as the same transfer of T rows.
func NewRooflineParallel(m ModelSpec, g GPUSpec, p Parallelism, cfg RooflineConfig) (*Roofline, error) {
	tp := p.TP
	if err := m.Validate(); err != nil {
		return nil, err
	}
	k, err := kernelsFor(m, g, cfg)
	if err != nil {
		return nil, fmt.Errorf("model %s on %s: %w", m.Name, g.Name, err)
	}
	denseLayers := m.Layers - m.MoELayers()
	switch {
	case tp < 1 || tp > 1024:
		return nil, fmt.Errorf("tensor_parallel: must be in [1,1024], got %d", tp)
	case m.Heads%tp != 0:
		return nil, fmt.Errorf("tensor_parallel: %d does not divide %s's %d attention heads", tp, m.Name, m.Heads)
	case m.KVHeads%tp != 0 && tp%m.KVHeads != 0:
		return nil, fmt.Errorf("tensor_parallel: %d neither divides nor is a multiple of %s's %d KV heads", tp, m.Name, m.KVHeads)
	case denseLayers > 0 && m.Intermediate%tp != 0:
		return nil, fmt.Errorf("tensor_parallel: %d does not divide %s's intermediate size %d", tp, m.Name, m.Intermediate)
	case m.IsMoE() && m.MoEIntermediate%tp != 0:
		return nil, fmt.Errorf("tensor_parallel: %d does not divide %s's expert intermediate size %d", tp, m.Name, m.MoEIntermediate)
	}
	if err := p.Validate(m); err != nil {
		return nil, err
	}

	layers := float64(m.Layers)
	h, d := m.Hidden, m.HeadDim
	qHeads := m.Heads / tp
	kvHeads := max(m.KVHeads/tp, 1) // replicated when tp > KVHeads
	inter := m.Intermediate / tp
	vocab := (m.Vocab + tp - 1) / tp

	r := &Roofline{
		Kernels: k,
		model:   m,
		gpu:     g,
		tp:      tp,
		cfg:     cfg,
		name:    fmt.Sprintf("roofline(%s, %s, tp=%d)", m.Name, g.Name, tp),
		layers:  layers,
		qkv:     k.shape(h, (qHeads+2*kvHeads)*d),
		o:       k.shape(qHeads*d, h),
		gateUp:  k.shape(h, 2*inter),
		down:    k.shape(inter, h),
		lmHead:  k.shape(h, vocab),
	}
	fq, fkv, fd := float64(qHeads), float64(kvHeads), float64(d)
	r.denseLayers, r.moeLayers = float64(denseLayers), float64(m.MoELayers())
	r.attnFixedNS = layers * k.attnNS
	full := float64(m.FullAttnLayers() - m.ChunkedLayers)
	r.attnFLOPNSPerPair = full * 4 * fq * fd / k.flopsPerNS
	r.kvReadNSPerToken = full * 2 * fkv * fd * k.kvBytes / k.bytesPerNS
	if m.SlidingLayers > 0 || m.ChunkedLayers > 0 {
		// Chunked layers (Llama 4) are priced as a window of the chunk:
		// exact up to one chunk of context, beyond it an upper bound (a
		// query sees only the part of its chunk before it).
		sw, win := float64(m.SlidingLayers), float64(m.SlidingWindow)
		if m.ChunkedLayers > 0 {
			sw, win = float64(m.ChunkedLayers), float64(m.AttentionChunk)
		}
		r.window = win
		r.swPairNS = sw * 4 * fq * fd / k.flopsPerNS
		r.swKVNS = sw * 2 * fkv * fd * k.kvBytes / k.bytesPerNS
	}
	r.qoNSPerToken = layers * 2 * fq * fd * k.actBytes / k.bytesPerNS
	kvWidth := 2 * fkv * fd // one token's K and V per layer on this GPU, elements
	if m.IsMLA() {
		// Absorbed attention (vLLM's MLA decode path, also used here for
		// prefill): each query head scores the cached latent and rotary key
		// (KVLoRARank + QKRopeHeadDim) and sums the latent (KVLoRARank),
		// 2 FLOPs per multiply-add; every rank reads the whole latent.
		lat, rope := float64(m.KVLoRARank), float64(m.QKRopeHeadDim)
		r.mla = true
		r.attnFLOPNSPerPair = layers * 2 * fq * (2*lat + rope) / k.flopsPerNS
		r.kvReadNSPerToken = layers * (lat + rope) * k.kvBytes / k.bytesPerNS
		r.qoNSPerToken = layers * fq * (2*lat + rope) * k.actBytes / k.bytesPerNS
		kvWidth = lat + rope
		qk := qHeads * (m.QKNopeHeadDim + m.QKRopeHeadDim)
		if m.QLoRARank > 0 {
			r.qA = k.shape(h, m.QLoRARank)
			r.qB = k.shape(m.QLoRARank, qk)
		} else {
			r.qB = k.shape(h, qk)
		}
		r.kvA = k.shape(h, m.KVLoRARank+m.QKRopeHeadDim)
		r.kvB = k.shape(m.KVLoRARank, qHeads*(m.QKNopeHeadDim+m.VHeadDim))
		r.o = k.shape(qHeads*m.VHeadDim, h)
	}
	if !m.IsMoE() && len(cfg.MoEExpertLoad) > 0 {
		return nil, fmt.Errorf("roofline.moe_expert_load: model %s has no routed experts", m.Name)
	}
	if m.IsMoE() {
		r.experts, r.topK = float64(m.Experts), float64(m.ExpertsPerToken)
		if r.route, err = newRouting(cfg, m.Experts, m.ExpertsPerToken, 1); err != nil {
			return nil, fmt.Errorf("model %s: %w", m.Name, err)
		}
		r.router = k.shape(h, m.Experts)
		ek := k
		ek.wBytes = float64(m.expertWeightBits()) / 8
		if m.expertScaleBytes() > 0 { // MXFP4: one scale byte per 32 weights
			ek.wBytes += 1.0 / 32
		}
		if bits := m.expertWeightBits(); (bits < 8 && !(bits == 4 && m.WeightFP4 && g.PeakFP4FLOPS > 0)) || (bits == 8 && g.PeakFP8FLOPS == 0) {
			ek.flopsPerNS = g.PeakFLOPS * cfg.ComputeEfficiency / 1e9
			ek.opBytes = max(float64(m.DTypeBytes), 2)
			ek.tileRows = wnaTileRows
		}
		mi := m.MoEIntermediate / tp
		emi := mi // one GPU's slice of a routed expert
		r.expertShards = float64(tp)
		if p.Group() {
			emi = m.MoEIntermediate / p.GPUs()
			r.expertShards = float64(p.GPUs())
			if p.ExpertParallel {
				emi, r.expertShards = m.MoEIntermediate, 1
			}
		}
		r.expGateUp = ek.shape(h, 2*emi)
		r.expDown = ek.shape(emi, h)
		if m.SharedExperts > 0 {
			r.hasShared = true
			r.sharedGateUp = k.shape(h, 2*m.SharedExperts*mi)
			r.sharedDown = k.shape(m.SharedExperts*mi, h)
		}
		// SiLU-and-multiply runs on each token's k routed and the shared
		// experts' widths instead of the dense intermediate; the router
		// writes E logits.
		moeInter := float64((m.ExpertsPerToken+m.SharedExperts)*mi) - float64(m.Intermediate)/float64(tp)
		r.moeEWDeltaNSPerToken = r.moeLayers * k.actBytes * (3*moeInter + float64(m.Experts)) / k.bytesPerNS
	}

	// Per layer and token: two fused add+RMSNorm read and write the hidden
	// state and the residual (8·h), rotary embedding reads and writes q and k,
	// SiLU-and-multiply reads gate and up and writes their product, and the
	// cache write reads k and v and stores them.
	ewBytes := k.actBytes*(8*float64(h)+2*(fq+fkv)*fd+3*float64(inter)+kvWidth) + kvWidth*k.kvBytes
	r.elementwiseNSPerToken = layers*ewBytes/k.bytesPerNS + r.moeEWDeltaNSPerToken
	r.elementwiseFixedNS = layers * elementwiseKernels * k.kernelNS

	if tp > 1 {
		count := 2*layers + 2
		ringBytes := 2 * float64(tp-1) / float64(tp) * float64(h) * k.actBytes
		r.allReduceFixedNS = count * cfg.AllReduceLatencyUS * 1e3
		r.allReduceNSPerToken = count * ringBytes / (g.InterconnectBW * cfg.AllReduceEfficiency / 1e9)
	}
	r.overheadNS = cfg.OverheadUS * 1e3
	r.seqOverheadNS = cfg.SeqOverheadUS * 1e3
	attnGEMMs := 2.0 // qkv, o
	if r.mla {
		attnGEMMs = 4 // q_b, kv_a, kv_b, o
		if m.QLoRARank > 0 {
			attnGEMMs++
		}
	}
	moeGEMMs := 3.0 // router, the two grouped expert GEMMs
	if r.hasShared {
		moeGEMMs += 2
	}
	r.layerGEMMs = layers*attnGEMMs + r.denseLayers*2 + r.moeLayers*moeGEMMs
	r.graphSaveNS = (cfg.KernelOverheadUS - cfg.GraphKernelOverheadUS) * 1e3
	if p.Group() {
		r.setGroup(p, g, cfg)
	}
	r.work = r.workRates()
	return r, nil
}

// setGroup derives the data- and expert-parallel terms (see
// NewRooflineParallel).
func (r *Roofline) setGroup(p Parallelism, g GPUSpec, cfg RooflineConfig) {
	n := p.GPUs()
	r.group, r.dp, r.ep, r.gpus = true, p.Ranks(), p.ExpertParallel, float64(n)
	r.name = fmt.Sprintf("roofline(%s, %s, tp=%d, dp=%d", r.model.Name, g.Name, r.tp, r.dp)
	if r.ep {
		r.name += ", ep"
		r.localExperts = r.experts / r.gpus
		r.route.place(n)
	}
	r.name += ")"
	r.maxLoadZ = math.Sqrt(2 * math.Log(r.gpus))
	inNode := float64(min(n, g.ScaleUp()))
	intra, inter := (inNode-1)/r.gpus, (r.gpus-inNode)/r.gpus
	rowBytes := float64(r.model.Hidden) * r.actBytes
	eff := cfg.AllReduceEfficiency
	perRow := rowBytes * intra / (g.InterconnectBW * eff / 1e9)
	if inter > 0 {
		perRow += rowBytes * inter / (g.ScaleOut() * eff / 1e9)
	}
	if n > 1 {
		r.a2aNSPerRow = 2 * perRow
		r.a2aFixedNS = 2 * g.A2ALatencyUS(n) * 1e3
	}
}

// rankBatch is the busiest data-parallel rank's share of b: ⌈n/dp⌉ of
// its n prefill and of its n decode sequences, each share carrying the
// average sequence's tokens, pairs and context.
func (r *Roofline) rankBatch(b *Batch) Batch {
	var rb Batch
	dp := r.dp
	if n := b.PrefillSeqs; n > 0 {
		s := (n + dp - 1) / dp
		f := float64(s) / float64(n)
		rb.PrefillSeqs = s
		rb.PrefillTokens = scaleCount(b.PrefillTokens, f)
		rb.PrefillAttn = scaleCount(b.PrefillAttn, f)
		rb.PrefillTokCtx = scaleCount(b.PrefillTokCtx, f)
		rb.PrefillContext = scaleCount(b.PrefillContext, f)
	}
	if n := b.DecodeSeqs; n > 0 {
		s := (n + dp - 1) / dp
		f := float64(s) / float64(n)
		rb.DecodeSeqs = s
		rb.DecodeContext = scaleCount(b.DecodeContext, f)
		rb.DecodeExtraTokens = scaleCount(b.DecodeExtraTokens, f)
		rb.DecodeExtraPairs = scaleCount(b.DecodeExtraPairs, f)
	}
	return rb
}

func scaleCount(v int64, f float64) int64 {
	if f >= 1 {
		return v
	}
	return int64(math.Round(float64(v) * f))
}

// BusiestRows is the expected (token, expert) rows the busiest GPU of the
// expert-parallel group receives for a step of tokens tokens under
// uniform routing: μ + σ·√(2 ln G), μ = tokens·k/G, σ² = μ(1 − 1/G), at
// most tokens·k. Without expert parallelism every GPU runs all tokens:
// tokens·k rows over its expert slices.
func (r *Roofline) BusiestRows(tokens float64) float64 {
	rows := tokens * r.topK
	if !r.ep || rows <= 0 {
		return rows
	}
	if r.route.skewed {
		return r.route.busiestRows(rows, r.maxLoadZ)
	}
	mu := rows / r.gpus
	return min(mu+r.maxLoadZ*math.Sqrt(mu*(1-1/r.gpus)), rows)
}

// routedNS is one MoE layer's routed-expert GEMMs on the busiest GPU of
// the group for a step of tokens tokens over all ranks.
func (r *Roofline) routedNS(tokens float64) float64 {
	if tokens <= 0 {
		return 0
	}
	if !r.ep {
		return r.routedGEMM(r.expGateUp, tokens) + r.routedGEMM(r.expDown, tokens)
	}
	rows := r.BusiestRows(tokens)
	d := r.localExperts * (1 - math.Pow(1-r.topK/r.experts, tokens))
	if r.route.skewed {
		d = r.route.busiestDistinct(tokens)
	}
	d = min(max(d, 1), r.localExperts, rows)
	return r.moeGEMMRows(r.expGateUp, rows, d) + r.moeGEMMRows(r.expDown, rows, d)
}

// routedGEMM is one of a MoE layer's routed grouped GEMMs (shape s) for m
// tokens on every expert's TP slice: moeGEMM under uniform routing, else
// the same rows over the distinct experts the skewed routing touches.
func (r *Roofline) routedGEMM(s gemmShape, m float64) float64 {
	if !r.route.skewed || m <= 0 {
		return r.moeGEMM(s, m, r.experts, r.topK)
	}
	return r.moeGEMMRows(s, m*r.topK, r.distinctExperts(m))
}

// distinctExperts is the expected number of routed experts a step of
// tokens tokens touches, at least topK and at most all of them.
func (r *Roofline) distinctExperts(tokens float64) float64 {
	d := r.experts * (1 - math.Pow(1-r.topK/r.experts, tokens))
	if r.route.skewed {
		d = r.route.distinct(tokens, 0, len(r.route.logMiss))
	}
	return min(max(d, r.topK), r.experts)
}

// a2aNS is one MoE layer's dispatch and combine for a step of tokens
// tokens over all ranks: the busiest GPU's rows with expert parallelism,
// every token's hidden state (all-gather, reduce-scatter) without.
func (r *Roofline) a2aNS(tokens float64) float64 {
	if tokens <= 0 || r.a2aNSPerRow == 0 {
		return 0
	}
	rows := tokens
	if r.ep {
		rows = r.BusiestRows(tokens)
	}
	return r.a2aFixedNS + rows*r.a2aNSPerRow
}

// workRates sums the shapes' FLOPs and bytes per row and per step. Every
// byte term of the pricing is divided by the same bandwidth, so its bytes
// are its time times bytesPerNS; FLOPs are counted untiled (model FLOPs,
// not the padding a partly filled tile computes).
func (r *Roofline) workRates() workRates {
	bw := r.bytesPerNS
	var w workRates
	add := func(s gemmShape, layers float64) {
		w.flopsPerToken += layers * s.flopsPerRow
		w.weightBytes += layers * s.weightNS * bw
		w.bytesPerToken += layers * s.rowNS * bw
	}
	attn := []gemmShape{r.qkv, r.o}
	if r.mla {
		attn = []gemmShape{r.qA, r.qB, r.kvA, r.kvB, r.o}
	}
	for _, s := range attn {
		add(s, r.layers)
	}
	add(r.gateUp, r.denseLayers)
	add(r.down, r.denseLayers)
	if r.moeLayers > 0 {
		add(r.router, r.moeLayers)
		if r.hasShared {
			add(r.sharedGateUp, r.moeLayers)
			add(r.sharedDown, r.moeLayers)
		}
		for _, s := range []gemmShape{r.expGateUp, r.expDown} {
			w.flopsPerToken += r.moeLayers * r.topK * s.flopsPerRow
			w.expertBytes += r.moeLayers * s.weightNS * bw
			w.bytesPerToken += r.moeLayers * r.topK * s.rowNS * bw
			w.expertFLOPs += r.moeLayers * r.topK * s.flopsPerRow
			w.expertRowB += r.moeLayers * r.topK * s.rowNS * bw
		}
	}
	w.flopsPerSeq = r.lmHead.flopsPerRow
	w.weightBytes += r.lmHead.weightNS * bw
	w.bytesPerSeq = r.lmHead.rowNS * bw
	w.flopsPerPair = r.attnFLOPNSPerPair * r.flopsPerNS
	w.bytesPerKV = r.kvReadNSPerToken * bw
	w.swFlopsPerPair = r.swPairNS * r.flopsPerNS
	w.swBytesPerKV = r.swKVNS * bw
	w.bytesPerQuery = r.qoNSPerToken * bw
	w.bytesPerToken += r.elementwiseNSPerToken * bw
	return w
}

// Work is what steps execute: model FLOPs (untiled GEMMs and attention)
// and bytes moved to and from device memory (weights, activations, KV
// reads and writes), summed over a replica's tensor-parallel GPUs.
type Work struct {
	FLOPs float64
	Bytes float64
}

// Counter is a step model that also counts a step's [Work]; the linear
// model does not (it knows times, not operations), so the engine counts
// its steps with a roofline of the same model and GPU.
type Counter interface {
	Model
	// StepWork is the work of the step b, as StepNS prices it. It must not
	// allocate.
	StepWork(b *Batch) Work
	// Peak is the replica's dense peak: FLOP/s of the dtype its GEMMs run
	// at and memory bytes/s, times the tensor-parallel degree.
	Peak() Work
}

// StepWork implements Counter: a handful of multiply-adds on the rates
// NewRoofline read off the step's shapes (and, for MoE, the distinct
// experts the step touches, as moeGEMM counts them).
func (r *Roofline) StepWork(b *Batch) Work {
	tokens := float64(b.Tokens())
	if tokens <= 0 {
		return Work{}
	}
	w := &r.work
	seqs := float64(b.PrefillSeqs + b.DecodeSeqs)
	pairs := float64(b.PrefillAttn + b.DecodeContext + b.DecodeExtraPairs)
	queries := float64(int64(b.PrefillTokens) + int64(b.DecodeSeqs) + b.DecodeExtraTokens)
	flops := tokens*w.flopsPerToken + seqs*w.flopsPerSeq + pairs*w.flopsPerPair
	bytes := w.weightBytes + tokens*w.bytesPerToken + seqs*w.bytesPerSeq +
		float64(b.PrefillContext+b.DecodeContext)*w.bytesPerKV + queries*w.bytesPerQuery
	if r.window > 0 {
		wp, wpc, wd, wdx := r.windowed(b)
		flops += (wp + wd + wdx) * w.swFlopsPerPair
		bytes += (wpc + wd) * w.swBytesPerKV
	}
	if r.group {
		// Attention and dense parts as tensor-parallel ranks (their
		// coefficients are per GPU of a rank); the routed experts are
		// split over expertShards GPUs each.
		tp, sh := float64(r.tp), r.expertShards
		ef, eb := tokens*w.expertFLOPs, tokens*w.expertRowB
		ew := r.distinctExperts(tokens) * w.expertBytes
		return Work{FLOPs: (flops-ef)*tp + ef*sh, Bytes: (bytes-eb)*tp + (eb+ew)*sh}
	}
	if r.moeLayers > 0 {
		bytes += r.distinctExperts(tokens) * w.expertBytes
	}
	tp := float64(r.tp)
	return Work{FLOPs: flops * tp, Bytes: bytes * tp}
}

// Peak implements Counter.
func (r *Roofline) Peak() Work {
	tp := float64(r.tp)
	if r.group {
		tp = r.gpus
	}
	return Work{FLOPs: r.peak * tp, Bytes: r.gpu.MemBandwidth * tp}
}

var _ Counter = (*Roofline)(nil)

// Name implements Model.
func (r *Roofline) Name() string { return r.name }

// Spec returns the model, GPU, tensor-parallel degree and configuration the
// roofline was built from.
func (r *Roofline) Spec() (ModelSpec, GPUSpec, int, RooflineConfig) {
	return r.model, r.gpu, r.tp, r.cfg
}

// LayerLinearNS is one layer's linear operators on one GPU for tokens tokens:
// the fused qkv projection, the o projection, the fused gate+up projection
// and the down projection, each a [Kernels.GEMMNS].
func (r *Roofline) LayerLinearNS(tokens int) float64 {
	return r.layerLinear(float64(tokens))
}

func (r *Roofline) layerLinear(m float64) float64 {
	return r.attnLinear(m) + r.gemm(r.gateUp, m) + r.gemm(r.down, m)
}

// attnLinear is one layer's attention projections for m tokens.
func (r *Roofline) attnLinear(m float64) float64 {
	if !r.mla {
		return r.gemm(r.qkv, m) + r.gemm(r.o, m)
	}
	t := r.gemm(r.qB, m) + r.gemm(r.kvA, m) + r.gemm(r.kvB, m) + r.gemm(r.o, m)
	if r.qA.weightNS > 0 {
		t += r.gemm(r.qA, m)
	}
	return t
}

// moeLayerLinear is one MoE layer's linear operators for m tokens: the
// attention projections, the router, the shared experts and the routed
// experts' two grouped GEMMs.
func (r *Roofline) moeLayerLinear(m float64) float64 {
	t := r.attnLinear(m) + r.gemm(r.router, m)
	if !r.group { // a group prices its routed experts on all ranks' tokens (Breakdown)
		t += r.routedGEMM(r.expGateUp, m)
		t += r.routedGEMM(r.expDown, m)
	}
	if r.hasShared {
		t += r.gemm(r.sharedGateUp, m) + r.gemm(r.sharedDown, m)
	}
	return t
}

// Breakdown is a step's time split by phase, in float nanoseconds; the phases
// add up to the step.
type Breakdown struct {
	LinearNS      float64 // all layers' GEMMs and the lm_head GEMM
	AttentionNS   float64 // attention kernels, prefill and decode
	ElementwiseNS float64 // norms, rotary, activation, KV-cache writes
	AllReduceNS   float64 // tensor-parallel collectives
	OverheadNS    float64 // fixed per-step and per-sequence overhead
	// AllToAllNS is the MoE layers' dispatch and combine between the GPUs
	// of a data- or expert-parallel group (0 without one).
	AllToAllNS float64
}

// TotalNS is the sum of the phases.
func (p Breakdown) TotalNS() float64 {
	return p.LinearNS + p.AttentionNS + p.ElementwiseNS + p.AllReduceNS + p.OverheadNS + p.AllToAllNS
}

// Breakdown prices b phase by phase. An empty batch costs nothing. With
// data or expert parallelism b is the whole group's step (see
// [NewRooflineParallel]), each rank priced on its share. Under CUDA graphs
// (WithCUDAGraphs) a step of at most the largest captured size runs its
// layers on [Roofline.PaddedTokens] tokens with the graph's kernel floors;
// attention and the logits GEMM see the real sequences.
func (r *Roofline) Breakdown(b *Batch) Breakdown {
	if !r.group {
		return r.phases(b)
	}
	tokens := float64(b.Tokens())
	if tokens <= 0 {
		return Breakdown{}
	}
	rb := r.rankBatch(b)
	p := r.phases(&rb)
	p.LinearNS += r.moeLayers * r.routedNS(tokens)
	p.AllToAllNS = r.moeLayers * r.a2aNS(tokens)
	return p
}

// phases prices b on one rank of tp GPUs.
func (r *Roofline) phases(b *Batch) Breakdown {
	tokens := float64(b.Tokens())
	if tokens <= 0 {
		return Breakdown{}
	}
	seqs := float64(b.PrefillSeqs + b.DecodeSeqs)
	padded := float64(r.PaddedTokens(b.Tokens()))
	graph := len(r.graphSizes) > 0 && b.Tokens() <= int64(r.graphSizes[len(r.graphSizes)-1])

	var p Breakdown
	if r.moeLayers == 0 && !r.mla {
		p.LinearNS = r.layers*r.layerLinear(padded) + r.gemm(r.lmHead, seqs)
	} else {
		p.LinearNS = r.gemm(r.lmHead, seqs) + r.moeLayers*r.moeLayerLinear(padded)
		if r.denseLayers > 0 {
			p.LinearNS += r.denseLayers * r.layerLinear(padded)
		}
	}

	var prefill, decode float64
	if r.window == 0 {
		prefill = roof(float64(b.PrefillAttn)*r.attnFLOPNSPerPair,
			float64(b.PrefillContext)*r.kvReadNSPerToken+float64(b.PrefillTokens)*r.qoNSPerToken)
		decode = roof(float64(b.DecodeContext+b.DecodeExtraPairs)*r.attnFLOPNSPerPair,
			float64(b.DecodeContext)*r.kvReadNSPerToken+float64(int64(b.DecodeSeqs)+b.DecodeExtraTokens)*r.qoNSPerToken)
	} else {
		wp, wpc, wd, wdx := r.windowed(b)
		prefill = roof(float64(b.PrefillAttn)*r.attnFLOPNSPerPair+wp*r.swPairNS,
			float64(b.PrefillContext)*r.kvReadNSPerToken+wpc*r.swKVNS+float64(b.PrefillTokens)*r.qoNSPerToken)
		decode = roof(float64(b.DecodeContext+b.DecodeExtraPairs)*r.attnFLOPNSPerPair+(wd+wdx)*r.swPairNS,
			float64(b.DecodeContext)*r.kvReadNSPerToken+wd*r.swKVNS+float64(int64(b.DecodeSeqs)+b.DecodeExtraTokens)*r.qoNSPerToken)
	}
	p.AttentionNS = r.attnFixedNS + prefill + decode

	p.ElementwiseNS = r.elementwiseFixedNS + padded*r.elementwiseNSPerToken
	if r.tp > 1 {
		p.AllReduceNS = r.allReduceFixedNS + padded*r.allReduceNSPerToken
	}
	if graph {
		// The host launches none of the graph's kernels: each GEMM and
		// elementwise kernel of the layers keeps only the graph's floor, and
		// so does each attention call of a full (decode-only) graph.
		p.LinearNS -= r.layerGEMMs * r.graphSaveNS
		p.ElementwiseNS -= r.layers * elementwiseKernels * r.graphSaveNS
		if b.PrefillSeqs == 0 {
			p.AttentionNS -= min(r.layers*r.graphSaveNS, r.attnFixedNS)
		}
	}
	p.OverheadNS = r.overheadNS + seqs*r.seqOverheadNS
	return p
}

// windowed is b's attention work in a sliding-window layer of r.window
// tokens: the prefill pairs (each query attends to at most the window),
// the prefill context read (each chunk's own tokens and at most the
// window before them), the decode context read and the draft positions'
// pairs. Decode contexts are taken at their mean, n·min(mean, window), an
// upper bound of Σ min(context, window): the batch keeps only sums.
func (r *Roofline) windowed(b *Batch) (prefPairs, prefCtx, decCtx, decExtra float64) {
	w := r.window
	prefPairs = min(float64(b.PrefillAttn), float64(b.PrefillTokens)*w)
	prefCtx = min(float64(b.PrefillContext), float64(b.PrefillTokens)+float64(b.PrefillSeqs)*w)
	if n := float64(b.DecodeSeqs); n > 0 {
		avg := float64(b.DecodeContext) / n
		decCtx = n * min(avg, w)
		if avg > 0 {
			decExtra = float64(b.DecodeExtraPairs) * min(1, w/avg)
		}
	}
	return prefPairs, prefCtx, decCtx, decExtra
}

// StepNS implements Model: the rounded sum of the phases, at least 1 ns for a
// non-empty batch.
func (r *Roofline) StepNS(b *Batch) int64 {
	if b.Tokens() <= 0 {
		return 0
	}
	return roundNS(r.Breakdown(b).TotalNS())
}

// maxStepNS caps a step at about 146 years so that absurd inputs saturate
// instead of overflowing int64 (and sums of a few steps still fit).
const maxStepNS = math.MaxInt64 / 2

// roundNS rounds a positive step time to integer nanoseconds in [1, maxStepNS].
func roundNS(t float64) int64 {
	if !(t < maxStepNS) { // also catches NaN
		return maxStepNS
	}
	return max(int64(math.Round(t)), 1)
}

var _ Model = (*Roofline)(nil)
