package scheduler

import (
	"fmt"
	"strings"
)

// Config selects and tunes the scheduling policies. Zero limits mean "vLLM's
// default for the GPU" and are filled in by [Config.WithDefaults].
type Config struct {
	// Policy is the batching policy: chunked (default), prefill-first, orca, static.
	Policy string `yaml:"policy" json:"policy"`
	// MaxNumSeqs caps sequences in the running set (vLLM --max-num-seqs).
	// 0: 1024 on GPUs with ≥ 70 GiB other than A100, 256 otherwise (vLLM V1's
	// OpenAI-server defaults).
	MaxNumSeqs int `yaml:"max_num_seqs" json:"max_num_seqs"`
	// MaxNumBatchedTokens is the per-step token budget (vLLM
	// --max-num-batched-tokens). 0: 8192 on GPUs with ≥ 70 GiB other than
	// A100, 2048 otherwise. prefill-first raises it to the model's context
	// length, as vLLM v0 did without chunked prefill.
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"`
	// LongPrefillTokenThreshold caps the tokens one request's prefill may
	// take in a step under chunked (vLLM --long-prefill-token-threshold);
	// 0: no cap beyond the budget.
	LongPrefillTokenThreshold int `yaml:"long_prefill_token_threshold" json:"long_prefill_token_threshold"`
	// Queue orders waiting requests: fcfs (default), priority, shortest-prompt-first.
	Queue string `yaml:"queue" json:"queue"`
	// Preemption is what happens when the cache cannot grow: recompute
	// (default, vLLM v1: the victim's blocks are freed), swap (vLLM v0's
	// swap space; falls back to recompute when swap space is full) or pause
	// (the sequence that cannot grow keeps its blocks and skips steps until
	// blocks free; when every running sequence is paused, the victim rule's
	// sequence — the newest by default — is preempted by recompute, as vLLM
	// would, so the others can grow).
	Preemption string `yaml:"preemption" json:"preemption"`
	// Victim picks the sequence to preempt: newest (default, vLLM) or lowest-priority.
	Victim string `yaml:"victim" json:"victim"`
	// Admission decides which requests are queued and when they may start.
	Admission AdmissionConfig `yaml:"admission" json:"admission"`
}

// AdmissionConfig selects an admission rule and holds every rule's parameters.
type AdmissionConfig struct {
	// Rule is always (default), kv-watermark, kv-reserve, max-queue or token-bucket.
	Rule string `yaml:"rule" json:"rule"`
	// Watermark (kv-watermark) is the share of KV blocks that must stay free
	// after a waiting request starts; vLLM v0's default 0.01.
	Watermark float64 `yaml:"watermark" json:"watermark"`
	// ReserveOutputTokens (kv-reserve) is the projected output per request;
	// 0 reserves each request's max_tokens, which vLLM benchmarks set to the
	// sampled output length.
	ReserveOutputTokens int `yaml:"reserve_output_tokens" json:"reserve_output_tokens"`
	// MaxQueue (max-queue) rejects an arrival when this many requests wait. Default 256.
	MaxQueue int `yaml:"max_queue" json:"max_queue"`
	// TokensPerS (token-bucket) is the refill rate in prompt+output tokens per second.
	TokensPerS float64 `yaml:"tokens_per_s" json:"tokens_per_s"`
	// BurstTokens (token-bucket) is the bucket's capacity in tokens.
	BurstTokens float64 `yaml:"burst_tokens" json:"burst_tokens"`
}

// DefaultConfig is vLLM v1's scheduler: chunked prefill, FCFS, recompute,
// newest-first preemption, no admission control. Limits stay 0 until
// WithDefaults knows the GPU.
func DefaultConfig() Config {
	return Config{
		Policy:     "chunked",
		Queue:      "fcfs",
		Preemption: "recompute",
		Victim:     "newest",
		Admission: AdmissionConfig{
			Rule:        "always",
			Watermark:   0.01,
			MaxQueue:    256,
			TokensPerS:  20000,
			BurstTokens: 40000,
		},
	}
}

// DefaultLimits returns vLLM V1's OpenAI-server defaults for
// max_num_batched_tokens and max_num_seqs: 8192 and 1024 on a GPU with at
// least 70 GiB that is not an A100, 2048 and 256 otherwise
// (vllm/engine/arg_utils.py, _set_default_args_v1).
func DefaultLimits(gpuName string, gpuMemBytes int64) (tokens, seqs int) {
	if gpuMemBytes >= 70<<30 && !strings.Contains(strings.ToLower(gpuName), "a100") {
		return 8192, 1024
	}
	return 2048, 256
}

// WithDefaults fills zero limits from the GPU. (prefill-first raises its
// budget to the model's context length when it plans, so any prompt fits
// one step; the configured value is kept as given.)
func (c Config) WithDefaults(gpuName string, gpuMemBytes int64) Config {
	tok, seqs := DefaultLimits(gpuName, gpuMemBytes)
	if c.MaxNumBatchedTokens == 0 {
		c.MaxNumBatchedTokens = tok
	}
	if c.MaxNumSeqs == 0 {
		c.MaxNumSeqs = seqs
	}
	return c
}

// Validate reports the first field with an unknown name or impossible value.
func (c Config) Validate() error {
	if _, ok := batchers[c.Policy]; !ok {
		return fmt.Errorf("scheduler.policy: unknown policy %q; valid: %s", c.Policy, strings.Join(BatcherNames(), ", "))
	}
	if _, ok := orders[c.Queue]; !ok {
		return fmt.Errorf("scheduler.queue: unknown queue order %q; valid: %s", c.Queue, strings.Join(OrderNames(), ", "))
	}
	if _, ok := victims[c.Victim]; !ok {
		return fmt.Errorf("scheduler.victim: unknown victim rule %q; valid: %s", c.Victim, strings.Join(VictimNames(), ", "))
	}
	if c.Preemption != "recompute" && c.Preemption != "swap" && c.Preemption != "pause" {
		return fmt.Errorf("scheduler.preemption: must be recompute, swap or pause, got %q", c.Preemption)
	}
	if c.MaxNumSeqs < 0 {
		return fmt.Errorf("scheduler.max_num_seqs: must be ≥ 1 (0 takes vLLM's default), got %d", c.MaxNumSeqs)
	}
	if c.MaxNumBatchedTokens < 0 {
		return fmt.Errorf("scheduler.max_num_batched_tokens: must be ≥ 1 (0 takes vLLM's default), got %d", c.MaxNumBatchedTokens)
	}
	if c.LongPrefillTokenThreshold < 0 {
		return fmt.Errorf("scheduler.long_prefill_token_threshold: must be ≥ 0 (0 = no cap), got %d", c.LongPrefillTokenThreshold)
	}
	return c.Admission.Validate()
}

// Validate checks the selected rule's parameters.
func (a AdmissionConfig) Validate() error {
	if _, ok := admissions[a.Rule]; !ok {
		return fmt.Errorf("scheduler.admission.rule: unknown rule %q; valid: %s", a.Rule, strings.Join(AdmissionNames(), ", "))
	}
	switch {
	case !(a.Watermark >= 0 && a.Watermark < 1):
		return fmt.Errorf("scheduler.admission.watermark: must be in [0,1), got %g", a.Watermark)
	case a.ReserveOutputTokens < 0:
		return fmt.Errorf("scheduler.admission.reserve_output_tokens: must be ≥ 0, got %d", a.ReserveOutputTokens)
	case a.MaxQueue < 0:
		return fmt.Errorf("scheduler.admission.max_queue: must be ≥ 0, got %d", a.MaxQueue)
	case !(a.TokensPerS > 0 && a.TokensPerS <= 1e12):
		return fmt.Errorf("scheduler.admission.tokens_per_s: must be in (0, 1e12], got %g", a.TokensPerS)
	case !(a.BurstTokens > 0 && a.BurstTokens <= 1e15):
		return fmt.Errorf("scheduler.admission.burst_tokens: must be in (0, 1e15], got %g", a.BurstTokens)
	}
	return nil
}
