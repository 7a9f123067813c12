package kvcache

import "fmt"

// Config sizes the cache. Zero values mean "derive from the model and GPU"
// where noted; the engine fills those in before building a Manager.
type Config struct {
	// BlockSize is tokens per KV block (vLLM's --block-size). Default 16.
	BlockSize int `yaml:"block_size" json:"block_size"`
	// GPUMemoryUtilization is the share of GPU memory vLLM may use for
	// weights, activations and KV cache (--gpu-memory-utilization). Default 0.9.
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization" json:"gpu_memory_utilization"`
	// NumGPUBlocks overrides the derived block count when > 0
	// (vLLM's --num-gpu-blocks-override). Default 0: derived.
	NumGPUBlocks int `yaml:"num_gpu_blocks" json:"num_gpu_blocks"`
	// ActivationReserveGiB is GPU memory per GPU held back besides the
	// weights: the activation peak and non-torch memory (cuBLAS workspaces,
	// NCCL buffers) that vLLM's start-up profile measures. 0 derives it from
	// the model, max_num_batched_tokens, max_num_seqs and tensor parallelism
	// as that profile would (sim/cost/memory.go).
	ActivationReserveGiB float64 `yaml:"activation_reserve_gib" json:"activation_reserve_gib"`
	// SwapSpaceGiB is CPU memory per GPU for swapped-out blocks
	// (vLLM v0's --swap-space). Default 4.
	SwapSpaceGiB float64 `yaml:"swap_space_gib" json:"swap_space_gib"`
	// EnablePrefixCaching turns on automatic prefix caching as vLLM V1 does
	// it (--enable-prefix-caching, on by default there): every full KV block
	// is cached by its content, and a starting or recomputed request reuses
	// the leading blocks still cached (see Content). Default true.
	EnablePrefixCaching bool `yaml:"enable_prefix_caching" json:"enable_prefix_caching"`
	// HostLinkGBps is the GPU↔CPU copy bandwidth in GB/s (10^9 bytes/s)
	// one way; 0 takes the GPU preset's PCIe figure.
	HostLinkGBps float64 `yaml:"host_link_gbps" json:"host_link_gbps"`
	// Tiers are offload tiers beneath the GPU, top first (tier.go): cached
	// blocks the GPU evicts move to the first, each tier's oldest to the
	// next, and a prefix hit in a tier loads the blocks back at its read
	// bandwidth. A tier named cpu must come first; it replaces
	// swap_space_gib and host_link_gbps for preemption by swap (its
	// capacity is the swap space, shared with its cached blocks; swap-outs
	// write at write_gbps, swap-ins read at read_gbps). Needs prefix caching.
	Tiers []Tier `yaml:"tiers,omitempty" json:"tiers,omitempty"`
}

// Tier is one offload tier. Capacity and bandwidths are per GPU, as
// swap_space_gib and host_link_gbps are: a replica of TP GPUs has TP times
// the capacity and copies over TP links in parallel.
type Tier struct {
	// Name is cpu (DRAM, shared with swap space) or any other name (ssd).
	Name string `yaml:"name" json:"name"`
	// CapacityGiB is the tier's KV space per GPU in GiB.
	CapacityGiB float64 `yaml:"capacity_gib" json:"capacity_gib"`
	// ReadGBps is the tier→GPU load bandwidth per GPU in GB/s (10^9 bytes/s).
	ReadGBps float64 `yaml:"read_gbps" json:"read_gbps"`
	// WriteGBps is the GPU→tier bandwidth per GPU in GB/s: swap-outs to
	// the cpu tier pay it; offloads of evicted blocks are written in the
	// background and do not lengthen a step.
	WriteGBps float64 `yaml:"write_gbps" json:"write_gbps"`
}

// DefaultConfig returns vLLM's defaults.
func DefaultConfig() Config {
	return Config{BlockSize: 16, GPUMemoryUtilization: 0.9, SwapSpaceGiB: 4, EnablePrefixCaching: true}
}

// Validate reports the first field with an impossible value.
func (c Config) Validate() error {
	switch {
	case c.BlockSize < 1 || c.BlockSize > 1024:
		return fmt.Errorf("kvcache.block_size: must be in [1,1024] tokens, got %d", c.BlockSize)
	case !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1):
		return fmt.Errorf("kvcache.gpu_memory_utilization: must be in (0,1], got %g", c.GPUMemoryUtilization)
	case c.NumGPUBlocks < 0:
		return fmt.Errorf("kvcache.num_gpu_blocks: must be ≥ 0 (0 derives it), got %d", c.NumGPUBlocks)
	case !(c.ActivationReserveGiB >= 0 && c.ActivationReserveGiB <= 1e5):
		return fmt.Errorf("kvcache.activation_reserve_gib: must be in [0, 100000] GiB, got %g", c.ActivationReserveGiB)
	case !(c.SwapSpaceGiB >= 0 && c.SwapSpaceGiB <= 1e5):
		return fmt.Errorf("kvcache.swap_space_gib: must be in [0, 100000] GiB, got %g", c.SwapSpaceGiB)
	case !(c.HostLinkGBps == 0 || (c.HostLinkGBps >= 0.01 && c.HostLinkGBps <= 1e5)):
		return fmt.Errorf("kvcache.host_link_gbps: must be 0 (the GPU's) or in [0.01, 100000] GB/s, got %g", c.HostLinkGBps)
	case len(c.Tiers) > MaxTiers:
		return fmt.Errorf("kvcache.tiers: at most %d tiers, got %d", MaxTiers, len(c.Tiers))
	case len(c.Tiers) > 0 && !c.EnablePrefixCaching:
		return fmt.Errorf("kvcache.tiers: offload tiers hold evicted prefix-cache blocks; set kvcache.enable_prefix_caching: true")
	}
	for i, t := range c.Tiers {
		f := fmt.Sprintf("kvcache.tiers[%d]", i)
		switch {
		case t.Name == "":
			return fmt.Errorf("%s.name: must be set (cpu, ssd, ...)", f)
		case t.Name == "cpu" && i != 0:
			return fmt.Errorf("%s.name: the cpu tier must be the first, next to the GPU", f)
		case !(t.CapacityGiB > 0 && t.CapacityGiB <= 1e6):
			return fmt.Errorf("%s.capacity_gib: must be in (0, 1000000] GiB, got %g", f, t.CapacityGiB)
		case !(t.ReadGBps >= 0.01 && t.ReadGBps <= 1e5):
			return fmt.Errorf("%s.read_gbps: must be in [0.01, 100000] GB/s, got %g", f, t.ReadGBps)
		case !(t.WriteGBps >= 0.01 && t.WriteGBps <= 1e5):
			return fmt.Errorf("%s.write_gbps: must be in [0.01, 100000] GB/s, got %g", f, t.WriteGBps)
		}
		for j := range i {
			if c.Tiers[j].Name == t.Name {
				return fmt.Errorf("%s.name: %q repeats kvcache.tiers[%d]", f, t.Name, j)
			}
		}
	}
	return nil
}
