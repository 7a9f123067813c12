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
// Prefix caching (prefix.go, on with EnablePrefixCaching): a prompt's
// leading units, named by ids that identify their content with everything
// before it, are shared between sequences: [Manager.AcquirePrefix] finds
// them when a sequence starts, [Manager.RegisterPrefix] caches the units it
// computes, [Manager.ReleasePrefix] drops its references; unreferenced
// units stay cached until [Manager.Grow] needs their blocks and evicts the
// least recently used. The id index is a map consulted per request start
// and per completed or evicted unit, never per token.
//
// The manager knows nothing of time: copy durations follow from the byte
// counts it reports and are priced by the engine.
package kvcache
