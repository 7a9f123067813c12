// Package workloads generates the requests a simulated server receives:
// when each arrives and how many tokens it brings in and asks for.
//
// A workload is a Config: an arrival process (Poisson or evenly spaced) at a
// rate, bounded by a request count or a duration, and the lengths of prompts
// and outputs, either two independent distributions (Dist, parsed from specs
// such as "lognormal:1024,1024,16,3072") or (prompt, output) pairs drawn from
// a length-only CSV trace (Lengths). New turns a Config and a seed into a
// Source, which yields Requests one at a time in arrival order without
// allocating. Output lengths are exact: a request generates OutputTokens
// tokens, as a benchmark client sending max_tokens with ignore_eos makes it.
//
// Runs are reproducible: everything random comes from streams seeded from the
// seed given to New and a stream name ("arrivals", "lengths"), so the same
// Config and seed give the same requests, and changing the length
// distribution never moves an arrival. Each Request carries its own Seed,
// RequestSeed(seed, ID), that depends on nothing else, for subsystems that
// must give a request the same luck under every policy.
//
// Start reading at Config and DefaultConfig (config.go), then New and the
// arrival processes (generator.go), Dist (dist.go) and Lengths (lengths.go).
// The package is a leaf: it imports nothing from the project and does no I/O
// except reading a lengths file in New.
package workloads
