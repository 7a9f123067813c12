package scheduler

import (
	"maps"
	"slices"
)

// Policy registries: explicit map literals from name to constructor. The
// lists of valid names are derived from them, never kept apart.

var batchers = map[string]struct {
	doc string
	new func(Config) Batcher
}{
	ChunkedName:      {"vLLM v1 / Sarathi-Serve: a per-step token budget filled by decodes, then partial prefills, then new prompts in chunks", newChunked},
	PrefillFirstName: {"vLLM v0: waiting prompts run as whole-prompt prefill-only steps that pause every decode", newPrefillFirst},
	OrcaName:         {"Orca: whole prompts join the running decodes each iteration", newOrca},
	StaticName:       {"request-level batching: a batch starts together and runs until its last request finishes", newStatic},
}

var admissions = map[string]struct {
	doc string
	new func(AdmissionConfig) Admission
}{
	AlwaysName:      {"queue every request; start the head whenever its first chunk fits", newAlways},
	KVWatermarkName: {"vLLM v0: start a request only if a watermark share of KV blocks stays free", newKVWatermark},
	KVReserveName:   {"reserve KV blocks for prompt + projected output at start, so running streams are never preempted", newKVReserve},
	MaxQueueName:    {"reject an arrival when max_queue requests are already waiting", newMaxQueue},
	TokenBucketName: {"reject an arrival when a token bucket (tokens_per_s, burst_tokens) of prompt+output tokens is empty", newTokenBucket},
}

var orders = map[string]struct {
	doc string
	new func() Order
}{
	FCFSName:     {"first come, first served (by arrival)", func() Order { return fcfs{} }},
	PriorityName: {"lowest priority value first, then arrival (vLLM --scheduling-policy priority)", func() Order { return priority{} }},
	SPFName:      {"shortest prompt first, then arrival", func() Order { return shortestPromptFirst{} }},
}

var victims = map[string]struct {
	doc string
	new func() Victim
}{
	NewestName:         {"preempt the sequence that started most recently (vLLM)", func() Victim { return newest{} }},
	LowestPriorityName: {"preempt the least important sequence (largest priority value), newest among equals", func() Victim { return lowestPriority{} }},
}

// BatcherNames lists the batching policies, sorted.
func BatcherNames() []string { return slices.Sorted(maps.Keys(batchers)) }

// AdmissionNames lists the admission rules, sorted.
func AdmissionNames() []string { return slices.Sorted(maps.Keys(admissions)) }

// OrderNames lists the queue orders, sorted.
func OrderNames() []string { return slices.Sorted(maps.Keys(orders)) }

// VictimNames lists the preemption victim rules, sorted.
func VictimNames() []string { return slices.Sorted(maps.Keys(victims)) }

// Describe returns the one-line description of a policy, admission rule,
// queue order or victim rule, and whether the name is known.
func Describe(name string) (string, bool) {
	if b, ok := batchers[name]; ok {
		return b.doc, true
	}
	if a, ok := admissions[name]; ok {
		return a.doc, true
	}
	if o, ok := orders[name]; ok {
		return o.doc, true
	}
	if v, ok := victims[name]; ok {
		return v.doc, true
	}
	return "", false
}
