// Package kvcache models a paged KV cache: a fixed pool of GPU blocks of
// BlockSize tokens each, handed to sequences as they prefill and decode, and
// a CPU swap space that preempted sequences' blocks can be copied into.
//
// Start with [Manager]: [Manager.Grow] is called by the scheduler before a
// sequence computes more tokens, [Manager.SwapOut] / [Manager.SwapIn] move a
// preempted sequence's blocks, and [Manager.Release] frees them when the
// sequence finishes or is evicted for recompute. A sequence's share of the
// cache is an [Alloc] value the caller keeps with the sequence, so the
// manager needs no per-sequence map and a step allocates nothing.
//
// Automatic prefix caching (prefix.go, on with EnablePrefixCaching), as
// vLLM V1 does it: every full block a sequence computes is cached under a
// content id ([Content], content.go, derived from a few keys per
// sequence). [Manager.AcquirePrefix] takes the leading cached blocks when a
// sequence (re)starts, [Manager.RegisterPrefix] caches the blocks it fills,
// [Manager.ReleasePrefix] (a sequence preempted, to start again) and
// [Manager.DropPrefix] (one that ended) drop its references; unreferenced
// blocks stay cached until [Manager.Grow] needs their blocks and evicts the
// least recently freed. The id index (index.go) is a fixed open-addressing
// table probed per request start and per filled or evicted block, never
// per token, and only for blocks another sequence can share: a request's
// own blocks ([Content].Own) are found through its block table.
//
// Offload tiers (tier.go, [Manager.AddTier]) sit beneath the GPU: blocks
// the prefix cache evicts move down to them, and a lookup that misses on
// the GPU loads a block a tier holds ([Manager.TakeTierLoads] counts the
// loads for pricing). A cpu tier first in line shares swap space's blocks.
//
// The manager knows nothing of time: copy durations follow from the byte
// counts it reports and are priced by the engine.
package kvcache
