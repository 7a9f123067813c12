// Package workloads produces the requests a simulated server receives:
// when each arrives, how many tokens it brings in and asks for, and, when
// the source knows them, its class, priority and prefix block ids.
//
// A workload is a Config, either generated or replayed:
//
//   - Generated: an arrival process (poisson, constant, gamma or weibull,
//     with a coefficient of variation or shape) at a mean rate, optionally
//     modulated over time by a rate curve (on/off bursts, a sinusoid,
//     piecewise-linear points or a repeating cycle), bounded by a request
//     count or a duration; lengths from two distributions (Dist: fixed,
//     uniform, normal, lognormal, pareto, probability tables, or values
//     drawn from a file's column) or (prompt, output) pairs drawn from a
//     length-only CSV (Lengths); or a mix of traffic classes (classes.go:
//     Class, class presets and mixes), each with its share, lengths,
//     priority, SLO limits and speculative acceptance profile.
//   - Closed loop (closed.go): a pool of users, each sending its next
//     request a think time after its previous one ended; the Source is
//     Reactive, told by the engine when requests end.
//   - Replayed: a trace file in one of Formats() — Azure's LLM inference
//     CSV, Mooncake's JSONL (whose hash_ids become PrefixBlocks), Vidur's
//     processed CSV, a length-only CSV, a ServeGen client (per-window rate
//     and burstiness statistics, from which requests are generated) or
//     itlsim's own request format, which RequestWriter writes.
//
// Transformations apply to either: a time window, sampling, a cap on
// prompt + output, and time scaling (a factor, or a target mean rate).
//
// New turns a Config and a seed into a Source, which yields Requests one
// at a time in arrival order. Generators and time-ordered traces stream:
// New reads a trace once to check every row (errors name the file, line
// and field) and the Source then reads it again, without allocating per
// request. Output lengths are exact: a request generates OutputTokens
// tokens, as a benchmark client sending max_tokens with ignore_eos makes
// it.
//
// Runs are reproducible: everything random comes from streams named under
// the seed given to New (seed.Stream: "arrivals", "lengths", "sample",
// "classes", "sharing"; the engine passes its run seed's child
// "workload"), so the same Config and seed give the same requests, and
// changing the length distribution never moves an arrival. Each Request
// carries its own Seed, RequestSeed(seed, ID), the child "request/<ID>",
// that depends on nothing else, for subsystems that must give a request
// the same luck under every policy; a closed-loop user's think time after
// a request is drawn from that request's seed.
//
// Start reading at Config and DefaultConfig (config.go) and New
// (generator.go); then the arrival processes (arrival.go) and rate curves
// (curve.go), Dist (dist.go, disttable.go) and Lengths (lengths.go); the
// trace formats (trace.go, then azure.go, jsonl.go, itlsim.go,
// servegen.go) and the transformations (transform.go). The package is a
// leaf: it imports nothing from the project and does no I/O except reading
// the files a Config names.
package workloads
