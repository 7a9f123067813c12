// Package seed is the one way itlsim derives random numbers: every random
// draw of a run, in every package, comes from a Rand that Stream returns
// for a parent seed and a name, and every seed below the run's comes from
// Derive. There is one generator family (SplitMix64, one uint64 of state,
// no allocation), one normal and one exponential sampler (exact
// ziggurats), one gamma sampler (Marsaglia and Tsang) and unbiased
// integers. No package builds a math/rand generator (tests make their
// random inputs as they like).
//
// # How names compose
//
// A seed is a node of a tree rooted at the run's seed (the scenario's
// seed: field or --seed). Derive(parent, name, parts...) is the child
// named name under parent, where the numbers in parts extend the name
// after slashes: Derive(p, "request", 17) is the child "request/17". A
// subsystem is handed its own seed and names its streams under it, so the
// full name of a stream is its path from the run seed:
//
//	run seed
//	├── workload                 the workload source (workloads.New)
//	│   ├── arrivals, lengths, classes, sharing, content, sample, think, ...
//	│   └── request/<id>         one request's seed (workloads.RequestSeed)
//	│       ├── key/<id>         its content key when the trace gives none
//	│       ├── think            the closed-loop think time after it ends
//	│       ├── specdecode/acceptance
//	│       └── delivery/latency, delivery/loss, delivery/connection, delivery/frame
//	├── replica/<i>              replica i of the cluster (0 in a plain run)
//	│   └── step-noise, hiccups
//	├── router, decode-router    the routers' seeded choices
//	└── serve/output-len         the live server's output lengths
//
// Tools that are not a simulation run root their own trees the same way:
// the replay command at its --seed ("recording/<r>" then "stream/<s>",
// under which "pauses" and "delivery"), the regression gate's bootstrap at
// its seed ("bootstrap/<b>", one stream per resample), the measured
// validation's arrivals ("validate-arrivals"), a recording's prompt words
// (a request's "prompt").
//
// # Why streams are independent
//
// A child seed is Mix(parent ^ Mix(Hash(name))): the FNV-1a hash of the
// name, scrambled by SplitMix64's output function (a bijection whose output
// bits each depend on every input bit), then mixed with the parent and
// scrambled again. Two different names, or the same name under two
// different parents, give unrelated seeds, and each stream is a SplitMix64
// sequence started at its own seed; SplitMix64 passes BigCrush and its
// sequences from unrelated seeds do not overlap in any run's length (2^64
// draws per stream). So a stream's draws depend only on its path, never on
// how many draws any other stream made.
//
// # What this keeps when policies are compared
//
// Because the workload's streams hang under "workload" and nothing else
// draws from them, every scheduler, router, cache or delivery setting
// compared on a scenario sees the same requests. Because every draw made
// for a request (speculative acceptance, network latency and loss, a
// closed-loop user's think time) comes from that request's own
// "request/<id>" seed, it is the same in every compared run whatever order
// the policy serves the requests in, and turning one mechanism on never
// shifts another's draws. Because replica i's noise hangs under
// "replica/<i>", adding replicas leaves replica 0's draws as they were,
// and a one-replica cluster is byte for byte the plain run.
//
// Start reading at Derive and Stream (seed.go), then Rand's samplers
// (seed.go, ziggurat.go). The package imports nothing of the project: the
// workloads, the simulator, speculative decoding, the delivery path and
// the command-line tools all build on it.
package seed
