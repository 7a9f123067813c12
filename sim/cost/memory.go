package cost

import (
	"fmt"
	"math"
)

// How vLLM V1 sizes the KV cache at start-up, and how itlsim estimates each
// term without a GPU. vLLM (vllm/v1/worker/gpu_worker.py, Worker):
//
//   - init_device takes a MemorySnapshot after NCCL is initialised and sets
//     requested_memory = total_memory × gpu_memory_utilization, where
//     total_memory is what the CUDA driver reports (torch.cuda.mem_get_info),
//     a little below the marketed capacity: 79.19 GiB on an H100 80GB.
//   - determine_available_memory runs gpu_model_runner.profile_run inside
//     vllm/utils/mem_utils.py memory_profiling: one dummy forward pass over
//     max_num_batched_tokens tokens, then a dummy sampler run over
//     min(max_num_seqs, max_num_batched_tokens) requests. The profile
//     reports the weights (model_memory_usage), torch_peak_increase (the
//     activation peak seen by PyTorch's allocator) and non_torch_increase
//     (memory allocated outside PyTorch: cuBLAS workspaces, NCCL and custom
//     all-reduce buffers). available_kv_cache_memory = requested_memory −
//     (weights + torch_peak_increase + non_torch_increase).
//   - compile_or_warm_up_model captures CUDA graphs after the KV cache has
//     been allocated, so their memory is not subtracted: it comes out of the
//     1 − gpu_memory_utilization headroom (the worker's own debug message says
//     memory_profiling "does not consider CUDAGraph memory size").
//   - vllm/v1/core/kv_cache_utils.py divides the available bytes by the page
//     size (block_size × layers × 2 × KV heads per GPU × head dim × dtype)
//     and logs "GPU KV cache size: N tokens" (blocks × block_size).
//
// [ActivationPeakBytes] and [NonTorchBytes] estimate the two profiled terms;
// sim/cost/memory_test.go compares the result with published vLLM start-up
// logs.
const (
	// samplerBytesPerLogit is the activation peak of vLLM V1's dummy
	// sampler run per (request, vocabulary entry): the bf16 logits, their
	// fp32 copy, softmax probabilities, log-probabilities and the top-k/top-p
	// sort's values and indices. Fitted to vLLM 0.19.0 on H100 at
	// max_num_seqs 1024: Llama-3.1-8B peaks at 1.89 GiB (15.5 bytes per
	// logit over its 128,256-entry vocabulary), Qwen2.5-7B at 2.21 GiB
	// (15.2 over 152,064), the same at TP 1, 2 and 4 because the logits are
	// gathered whole on every rank.
	samplerBytesPerLogit = 15.4
	// forwardPeakFactor scales the MLP's live tensors in the dummy forward
	// pass (residual and hidden state, 2·hidden, and gate, up and their
	// product, 3·intermediate/tp, per token) to the measured peak, which also
	// holds the attention and norm temporaries. Fitted to CodeLlama-7B (a
	// Llama 2 7B with a 32k vocabulary, where the forward pass and not the
	// sampler sets the peak): 0.77 GiB at 8,192 tokens on vLLM 0.19.0.
	forwardPeakFactor = 1.22
	// NonTorchBaseBytes is non-torch memory at tensor parallelism 1: the
	// cuBLAS/cuBLASLt workspaces and allocator slack, 0.24-0.27 GiB in
	// vLLM 0.19.0's profiles of 7-8B models on H100. 0.25 GiB.
	NonTorchBaseBytes = gib / 4
	// nonTorchCommBytes and nonTorchCommPerRankBytes are what tensor
	// parallelism adds: NCCL communicators and vLLM's custom all-reduce
	// buffers. vLLM 0.19.0 on H100 measured 2.06-2.07 GiB in all at TP 2
	// and 2.13 at TP 4 (Llama-3.1-8B, Qwen2.5-7B): 1.75 GiB plus 0.03 GiB
	// per rank.
	nonTorchCommBytes        = 7 * gib / 4
	nonTorchCommPerRankBytes = 3 * gib / 100
)

// ActivationPeakBytes is the PyTorch activation peak, in bytes per GPU, that
// vLLM's start-up profile measures for a token budget of maxBatchedTokens and
// at most maxNumSeqs sequences at tensor parallelism tp: the larger of the
// dummy forward pass's peak and the dummy sampler run's (the forward pass's
// temporaries are freed before the sampler runs).
func ActivationPeakBytes(m ModelSpec, maxBatchedTokens, maxNumSeqs, tp int) int64 {
	tp = max(tp, 1)
	tokens := max(maxBatchedTokens, 0)
	perToken := float64(2*m.Hidden+3*m.Intermediate/tp) * float64(max(m.DTypeBytes, 2))
	forward := forwardPeakFactor * float64(tokens) * perToken
	reqs := min(max(maxNumSeqs, 0), tokens)
	sampler := samplerBytesPerLogit * float64(reqs) * float64(m.Vocab)
	return int64(max(forward, sampler))
}

// NonTorchBytes is memory per GPU allocated outside PyTorch that vLLM's
// profile counts (non_torch_increase) at tensor parallelism tp.
func NonTorchBytes(tp int) int64 {
	if tp <= 1 {
		return NonTorchBaseBytes
	}
	return NonTorchBaseBytes + nonTorchCommBytes + int64(tp)*nonTorchCommPerRankBytes
}

// DefaultActivationReserve is the per-GPU memory, in bytes, vLLM's profile
// holds back besides the weights: [ActivationPeakBytes] plus
// [NonTorchBytes]. For Llama-3.1-8B at 8,192 tokens and 1,024 sequences on
// one GPU that is 2.13 GiB; vLLM 0.19.0 measured 1.89 + 0.25.
func DefaultActivationReserve(m ModelSpec, maxBatchedTokens, maxNumSeqs, tp int) int64 {
	return ActivationPeakBytes(m, maxBatchedTokens, maxNumSeqs, tp) + NonTorchBytes(tp)
}

// WeightBytesPerGPU is the share of the weights one GPU holds at tensor
// parallelism tp (the split is even up to rounding, which is ignored).
func WeightBytesPerGPU(m ModelSpec, tp int) int64 {
	return m.WeightBytes() / int64(max(tp, 1))
}

// RoutedExpertBytes is the routed experts' weights, all MoE layers.
func (m ModelSpec) RoutedExpertBytes() int64 {
	return m.RoutedExpertParams()*int64(m.expertWeightBits())/8 + m.expertScaleBytes()
}

// WeightBytesPerGPUParallel is the weights one GPU holds under p: with
// data or expert parallelism every rank holds the non-expert weights split
// over its TP GPUs, and the routed experts are split over all TP×DP GPUs
// (whole experts with expert parallelism, slices of each without: the
// same bytes). Plain tensor parallelism is [WeightBytesPerGPU].
func WeightBytesPerGPUParallel(m ModelSpec, p Parallelism) int64 {
	if !p.Group() {
		return WeightBytesPerGPU(m, p.TP)
	}
	experts := m.RoutedExpertBytes()
	return (m.WeightBytes()-experts)/int64(max(p.TP, 1)) + experts/int64(max(p.GPUs(), 1))
}

// KVBytesPerTokenPerGPU is the KV cache one token occupies on one GPU: the
// KV heads split over tp GPUs, or one replicated head each when tp exceeds
// the KV head count (as vLLM does).
func KVBytesPerTokenPerGPU(m ModelSpec, tp int) int64 {
	if m.IsMLA() { // the latent is replicated on every rank (vLLM)
		return m.KVBytesPerToken()
	}
	heads := max(m.KVHeads/max(tp, 1), 1)
	return 2 * int64(m.FullAttnLayers()) * int64(heads) * int64(m.HeadDim) * int64(m.KVElementBytes())
}

// KVBlocks is the number of KV-cache blocks of blockSize tokens one replica
// gets, computed per GPU as vLLM does:
//
//	(TotalMemoryBytes × gpuMemUtil − weights/tp − activationReserveBytes)
//	  / (blockSize × KV bytes per token per GPU)
//
// where activationReserveBytes is normally [DefaultActivationReserve].
//
// It fails, saying why, when the weights or the reserve leave no room for
// even one block.
func KVBlocks(m ModelSpec, g GPUSpec, tp, blockSize int, gpuMemUtil float64, activationReserveBytes int64) (int, error) {
	return KVBlocksParallel(m, g, Parallelism{TP: tp}, blockSize, gpuMemUtil, activationReserveBytes)
}

// KVBlocksParallel is [KVBlocks] for one data-parallel rank under p: each
// rank has its own cache, sized from what its GPUs hold
// ([WeightBytesPerGPUParallel]); a group of p.DP ranks has p.DP times
// these blocks.
func KVBlocksParallel(m ModelSpec, g GPUSpec, p Parallelism, blockSize int, gpuMemUtil float64, activationReserveBytes int64) (int, error) {
	tp := p.TP
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if err := g.Validate(); err != nil {
		return 0, err
	}
	switch {
	case tp < 1 || tp > 1024:
		return 0, fmt.Errorf("tensor_parallel: must be in [1,1024], got %d", tp)
	case blockSize < 1 || blockSize > 1<<20:
		return 0, fmt.Errorf("block_size: must be in [1,%d] tokens, got %d", 1<<20, blockSize)
	case !(gpuMemUtil > 0 && gpuMemUtil <= 1):
		return 0, fmt.Errorf("gpu_memory_utilization: must be in (0,1], got %g", gpuMemUtil)
	case activationReserveBytes < 0:
		return 0, fmt.Errorf("activation reserve: must be ≥ 0 bytes, got %d", activationReserveBytes)
	}
	usable := float64(g.TotalMemoryBytes()) * gpuMemUtil
	if err := p.Validate(m); err != nil {
		return 0, err
	}
	weights := float64(WeightBytesPerGPUParallel(m, p))
	if weights >= usable {
		return 0, fmt.Errorf("%s needs %.1f GiB of weights per GPU at tp=%d, %s has %.1f GiB usable at gpu_memory_utilization %.2f",
			m.Name, weights/gib, tp, g.Name, usable/gib, gpuMemUtil)
	}
	free := usable - weights - float64(activationReserveBytes)
	perBlock := float64(blockSize) * float64(KVBytesPerTokenPerGPU(m, tp))
	blocks := math.Floor(free / perBlock)
	if !(blocks >= 1) {
		return 0, fmt.Errorf("%s at tp=%d on %s: %.1f GiB usable at gpu_memory_utilization %.2f − %.1f GiB weights − %.1f GiB activation reserve leaves %.2f GiB, less than one %d-token KV block (%.1f MiB)",
			m.Name, tp, g.Name, usable/gib, gpuMemUtil, weights/gib, float64(activationReserveBytes)/gib,
			max(free, 0)/gib, blockSize, perBlock/(1<<20))
	}
	return int(min(blocks, math.MaxInt32)), nil
}
