// Package cost prices one engine step: given the composition of a
// continuous-batching step (how many prefill tokens, how many decoding
// sequences, how much context each attends to) it returns how long the step
// takes on a given model, GPU and tensor-parallel degree.
//
// Start with [Batch], the value the engine fills while it plans a step, and
// [Model], the interface that prices it. Two models implement it:
//
//   - [Roofline] (roofline.go) derives the time from first principles: each
//     GEMM of a transformer layer, the attention kernels, the elementwise
//     kernels and the tensor-parallel all-reduces are each priced from
//     FLOPs / sustained compute and bytes / sustained bandwidth (a smooth
//     maximum of the two, GEMMs in whole 128-row tiles) plus a fixed
//     per-kernel cost, using a [ModelSpec], a [GPUSpec] and the handful of
//     efficiencies in [RooflineConfig]. [Roofline.Breakdown] splits a step
//     by phase. Its operator-level prices
//     ([Kernels.GEMMNS], [Kernels.DecodeAttentionNS],
//     [Kernels.PrefillAttentionNS], [Roofline.LayerLinearNS]) are the same
//     formulas the step price is built from, so checking them against
//     measured kernels checks the model the engine uses.
//   - [Linear] (linear.go) is a fitted five-coefficient regression over the
//     same batch features, for users who have measured their own server.
//
// presets.go holds the architectures and GPUs that ship with itlsim, each
// figure cited next to its value; hfconfig.go parses the bytes of a Hugging
// Face config.json (dense, mixture-of-experts, MLA; fp8, int4 and mxfp4
// quantization) into a [ModelSpec]; the caller reads the file. memory.go sizes the KV cache the way vLLM
// V1's start-up profile does (what is left of the device's total ×
// gpu_memory_utilization after the weights, the activation peak and
// non-torch memory), with testdata/vllm_kv_logs.csv holding the published
// logs it is checked against. The checks of the roofline against public
// measurements (H100 kernels, Vidur's A100 layer profiles, Sarathi-Serve's
// hybrid-batch table, a vLLM Llama-3.3-70B run) read files, so they live
// above the engine, in reports/calibrate (check.go).
//
// Every value here is immutable after construction; StepNS neither allocates
// nor touches shared mutable state, so one model serves many concurrent runs.
// Units: time in integer nanoseconds at the [Model] boundary, float
// nanoseconds inside; bytes; FLOP; configuration in microseconds and
// dimensionless efficiencies as the field docs say.
package cost
