// Package specdecode models speculative decoding: a proposer drafts k
// tokens for a stream, the target model verifies them in one step, and an
// acceptance model decides how many of them survive.
//
// Start with [Config] (what the scenario's spec_decode section holds) and
// [Acceptance], the named acceptance models: iid (Leviathan et al.),
// position-decay, beta (a per-request α), regime (alternating in- and
// out-of-distribution phases), ood-share and ood-region. A [Stream] holds one
// request's speculation state — its random stream, its α, its phase, its
// fallback window — as a plain value the engine keeps with the request, so
// drawing allocates nothing. [Stream.Draw] returns how many of k drafted
// tokens are accepted; [Stream.Active] says whether the stream still
// speculates (fallback stops it when acceptance over the last window falls
// below a threshold).
//
// The package knows nothing of time: the engine prices the draft work
// ([Config.DraftSteps], the proposer's cost or a draft model's steps) and
// the verification (a decode with query length k+1) with the step cost model.
package specdecode
