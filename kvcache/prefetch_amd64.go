package kvcache

import "unsafe"

// prefetch asks the CPU to bring the cache line at addr in, without
// waiting for it (PREFETCHT0): the load that needs it later finds it there.
//
//go:noescape
func prefetch(addr unsafe.Pointer)
