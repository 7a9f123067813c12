//go:build !amd64

package kvcache

import "unsafe"

// prefetch is a no-op where no prefetch instruction is wired in.
func prefetch(unsafe.Pointer) {}
