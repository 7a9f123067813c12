package cost

import (
	"fmt"
	"math"
)

// Activation reserve: vLLM sizes the KV cache by profiling one forward pass
// at max_num_batched_tokens and keeping back the peak memory it saw besides
// the weights. DefaultActivationReserve approximates that peak without a GPU.
const (
	// ActivationReserveBaseBytes covers what does not grow with the token
	// budget: CUDA graphs for the decode batch sizes, NCCL buffers, the
	// sampler's logits for the largest batch, allocator slack. 1.5 GiB.
	ActivationReserveBaseBytes = 3 * gib / 2
	// activationReserveFactor doubles the live MLP activations to cover the
	// temporaries and fragmentation around them.
	activationReserveFactor = 2
)

// DefaultActivationReserve is the per-GPU memory, in bytes, held back for
// activations when maxBatchedTokens tokens run in one step at tensor
// parallelism tp: ActivationReserveBaseBytes plus twice the MLP's live
// tensors at that token count (the residual stream and hidden state,
// 2·hidden, and gate, up and their product, 3·intermediate/tp), 16-bit.
// For llama-3.1-8b at 8192 tokens on one GPU that is about 3.1 GiB; vLLM's
// profiler typically reports 1-4 GiB for such settings.
func DefaultActivationReserve(m ModelSpec, maxBatchedTokens, tp int) int64 {
	tp = max(tp, 1)
	perToken := int64(2*m.Hidden+3*m.Intermediate/tp) * int64(max(m.DTypeBytes, 2))
	return ActivationReserveBaseBytes + activationReserveFactor*int64(max(maxBatchedTokens, 0))*perToken
}

// WeightBytesPerGPU is the share of the weights one GPU holds at tensor
// parallelism tp (the split is even up to rounding, which is ignored).
func WeightBytesPerGPU(m ModelSpec, tp int) int64 {
	return m.WeightBytes() / int64(max(tp, 1))
}

// KVBytesPerTokenPerGPU is the KV cache one token occupies on one GPU: the
// KV heads split over tp GPUs, or one replicated head each when tp exceeds
// the KV head count (as vLLM does).
func KVBytesPerTokenPerGPU(m ModelSpec, tp int) int64 {
	heads := max(m.KVHeads/max(tp, 1), 1)
	return 2 * int64(m.Layers) * int64(heads) * int64(m.HeadDim) * int64(m.DTypeBytes)
}

// KVBlocks is the number of KV-cache blocks of blockSize tokens one replica
// gets, computed per GPU as vLLM does:
//
//	(MemoryBytes × gpuMemUtil − weights/tp − activationReserveBytes)
//	  / (blockSize × KV bytes per token per GPU)
//
// It fails, saying why, when the weights or the reserve leave no room for
// even one block.
func KVBlocks(m ModelSpec, g GPUSpec, tp, blockSize int, gpuMemUtil float64, activationReserveBytes int64) (int, error) {
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
	usable := float64(g.MemoryBytes) * gpuMemUtil
	weights := float64(WeightBytesPerGPU(m, tp))
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
