// Package kvlink configures the link a disaggregated cluster's KV caches
// cross from the prefill pool to the decode pool: its technology preset,
// bandwidth and latency, and whether transfers overlap the prefill layer
// by layer. Package sim times the transfers on it (sim/disagg.go).
package kvlink
