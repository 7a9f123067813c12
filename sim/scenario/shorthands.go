package scenario

import (
	"strings"

	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

// Shorthand is a flag that sets one scenario field (Path) of the commands
// that take a scenario. A List flag given several comma-separated values
// compares them, one run per value.
type Shorthand struct {
	Flag, Path, Usage string
	List              bool
}

// Shorthands are the scenario's field flags, in the order help lists
// them.
var Shorthands = []Shorthand{
	{"model", "model", "model preset or path of a Hugging Face config.json", true},
	{"gpu", "gpu", "GPU preset", true},
	{"tp", "tp", "tensor-parallel degree", true},
	{"dp", "dp", "data-parallel attention ranks of a MoE model, tp GPUs each, stepping in lockstep (vLLM --data-parallel-size)", true},
	{"enable-expert-parallel", "enable_expert_parallel", "place whole experts on the tp×dp GPUs (vLLM --enable-expert-parallel)", true},
	{"quantization", "quantization", "weight format (vLLM --quantization): fp8, mxfp4, nvfp4, int4 (awq, gptq); empty keeps the checkpoint's", true},
	{"kv-cache-dtype", "kv_cache_dtype", "KV cache element type (vLLM --kv-cache-dtype): auto or fp8", true},
	{"moe-routing-zipf", "cost.roofline.moe_routing_zipf", "MoE routing skew: Zipf exponent of the experts' shares of routed rows, in expert order (0: uniform; a measured load per expert: --set cost.roofline.moe_expert_load=[…])", true},
	{"seed", "seed", "random seed", true},
	{"policy", "scheduler.policy", "batching policy: " + names(scheduler.BatcherNames()), true},
	{"admission", "scheduler.admission.rule", "admission rule: " + names(scheduler.AdmissionNames()), true},
	{"queue", "scheduler.queue", "queue order: " + names(scheduler.OrderNames()), true},
	{"preemption", "scheduler.preemption", "preemption mode: recompute, swap or pause", true},
	{"victim", "scheduler.victim", "preemption victim: " + names(scheduler.VictimNames()), true},
	{"max-num-seqs", "scheduler.max_num_seqs", "max sequences per step (0: vLLM's default for the GPU)", true},
	{"max-num-batched-tokens", "scheduler.max_num_batched_tokens", "token budget per step (0: vLLM's default)", true},
	{"long-prefill-threshold", "scheduler.long_prefill_token_threshold", "max prefill tokens per request per step (chunked)", true},
	{"rate", "workload.rate", "arrival rate, requests/s", true},
	{"requests", "workload.requests", "number of requests", true},
	{"duration", "workload.duration_s", "seconds of arrivals (sets --requests to 0 unless it is given)", true},
	{"arrival", "workload.arrival", "arrival process: poisson, constant, gamma, weibull (with --set workload.cv=…) or closed (with workload.users, think_s)", true},
	{"input-len", "workload.input_len", "prompt lengths: fixed:N, uniform:MIN,MAX, normal:MEAN,SD,MIN,MAX, lognormal:MEAN,SD[,MIN,MAX], pareto:MIN,ALPHA[,MAX], table:LEN=P,…, empirical:FILE:COLUMN", false},
	{"output-len", "workload.output_len", "output lengths (same forms as --input-len)", false},
	{"lengths-file", "workload.lengths_file", "CSV with num_prefill_tokens,num_decode_tokens columns to sample lengths from", false},
	{"workload", "workload.trace", "replay a trace file in one of --workload-format's formats (see README, Workloads and traces)", false},
	{"workload-format", "workload.format", "format of --workload: " + names(workloads.Formats()) + " (default: detected)", false},
	{"num-gpu-blocks", "kvcache.num_gpu_blocks", "KV blocks (0: derived from GPU memory)", true},
	{"swap-space", "kvcache.swap_space_gib", "CPU swap space per GPU, GiB", true},
	{"host-link-gbps", "kvcache.host_link_gbps", "GPU↔CPU copy bandwidth, GB/s (0: the GPU's PCIe)", true},
	{"cost-model", "cost.model", "step cost model: roofline or linear", true},
	{"profile", "cost.profile", "fitted profile (itlsim calibrate -o FILE) whose cost model replaces the scenario's", true},
	{"enforce-eager", "cost.enforce_eager", "vLLM --enforce-eager: run every step eagerly, no CUDA graphs (--enforce-eager=false replays graphs)", true},
	{"cudagraph-capture-sizes", "cost.cudagraph_capture_sizes", "CUDA-graph capture sizes in tokens, e.g. 1,2,4,8 (vLLM cudagraph_capture_sizes; empty: vLLM's default for max_num_seqs)", false},
	{"noise-cv", "cost.noise_cv", "step-time noise, coefficient of variation", true},
	{"hiccup-rate", "cost.hiccup_rate_per_s", "engine hiccups per second", true},
	{"hiccup-ms", "cost.hiccup_ms", "duration of one hiccup, ms", true},
	{"step-time-scale", "cost.step_time_scale", "multiply every priced step's duration (1: as priced; --step-time-scale 1,1.05 shows what 5 % slower steps do)", true},
	{"frontend", "server.frontend", "front-end profile filling the server fields left at 0: vllm-v1, vllm-v0 (see docs/fidelity.md, \"The front end's sources\")", true},
	{"handoff-ms", "server.handoff_ms", "front end: process hand-off from the API server to the engine, ms per request (paid in parallel)", true},
	{"detokenize-us-per-output-token", "server.detokenize_us_per_output_token", "front end: detokenization per output token, µs (on the engine's step only with server.detokenize_in_engine, as in vLLM V0)", true},
	{"request-overhead-ms", "server.request_overhead_ms", "front end: fixed latency before the scheduler, ms per request (paid in parallel)", true},
	{"serial-ms-per-request", "server.serial_ms_per_request", "front end: serial work per request, ms (requests queue for it)", true},
	{"serial-us-per-prompt-token", "server.serial_us_per_prompt_token", "front end: serial tokenization per prompt token, µs (default 10, vLLM's Python server as measured, see README; 0 = off)", true},
	{"spec-decode", "spec_decode.method", "speculative decoding proposer: " + names(specdecode.Methods()), true},
	{"spec-k", "spec_decode.k", "draft tokens per step", true},
	{"spec-acceptance", "spec_decode.acceptance", "acceptance model: iid:A, position-decay:A,D, beta:A,B, regime:AIN,AOUT,MEANIN,MEANOUT, ood-share:AIN,AOUT,SHARE, ood-region:AIN,AOUT,FROM,TO", false},
	{"spec-draft-model", "spec_decode.draft_model", "draft model for --spec-decode draft-model (a preset or config.json)", true},
	{"spec-fallback-window", "spec_decode.fallback.window", "verify steps over which a stream's acceptance is judged (0: no fallback)", true},
	{"spec-fallback-threshold", "spec_decode.fallback.threshold", "stop speculating for a stream below this acceptance rate", true},
	{"spec-disable-by-batch-size", "spec_decode.disable_by_batch_size", "no speculation in steps with more running sequences (0: never)", true},
	{"network", "delivery.network.profile", "network profile between server and client: " + names(delivery.ProfileNames()), true},
	{"coalescing", "delivery.coalescing.preset", "proxy or TCP buffering: " + names(delivery.CoalescingNames()), true},
	{"frame-ms", "delivery.render.frame_ms", "renderer frame period, ms (16.7 for 60 Hz; 0: off)", true},
	{"smoothing", "delivery.smoothing.cadence_ms", "client smoothing buffer: release cadence, ms (0: off)", true},
	{"smoothing-depth", "delivery.smoothing.depth_ms", "client smoothing buffer: target depth, ms", true},
	{"flush", "delivery.flush.window_ms", "server accept-then-flush window, ms (0: off)", true},
	{"failover-ms", "delivery.failover.watchdog_ms", "mid-stream failover after this many ms without a token (0: off)", true},
	{"replicas", "cluster.replicas", "replicas of the configuration behind the router", true},
	{"router", "cluster.router.policy", "router of a cluster: " + names(router.Names()), true},
	{"router-staleness", "cluster.router.staleness_ms", "age of the engine load snapshots routers see, e.g. 100ms (0: live state)", true},
	{"stall-threshold", "metrics.stall_threshold_ms", "gaps above this many ms are stalls", false},
	{"itl-goodput", "metrics.itl_goodput_ms", "ITL goodput threshold θ, ms", false},
	{"slo-ttft", "metrics.slo.ttft_ms", "TTFT limit for SLO goodput, ms (0: none)", false},
	{"slo-tpot", "metrics.slo.tpot_ms", "TPOT limit for SLO goodput, ms (0: none)", false},
	{"slo-e2el", "metrics.slo.e2el_ms", "E2EL limit for SLO goodput, ms (0: none)", false},
	{"percentiles", "metrics.percentiles", "percentiles shown in tables, the JSON summary and gate metric names", false},
}

// names lists a registry's names for a flag's help.
func names(list []string) string { return strings.Join(list, ", ") }
