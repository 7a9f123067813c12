// Package router models the load balancer in front of a cluster of
// replicas: which replica an arriving request goes to. It is a leaf: it
// knows nothing of the engine, only small values — a [Request] (its id,
// prompt length and prompt block ids) and a [State] (each replica's load
// as the router sees it).
//
// Start with [Router] and [New]: a policy is built by name from the
// explicit registry in registry.go, each in its own file with the rule it
// follows and where that rule comes from (vLLM's data-parallel balancer,
// llm-d's scorers, SGLang's cache-aware router).
//
// Two kinds of signal reach a router. Router-local counters (requests it
// routed that have not ended: [Load.InFlight]) are always fresh. Engine
// reports (waiting and running requests, KV utilisation) arrive as
// snapshots the engine publishes every staleness period ([Config.StalenessMS];
// 0 reads the engines' live state, an oracle). [State.Snapshot] counts
// the snapshots, so a router that adjusts a snapshot optimistically (vLLM)
// knows when to drop its adjustments. Every random choice draws from the
// router's own seeded stream, so compared runs see identical routing
// luck. Prefix-aware routers keep a router-side index of the block ids they
// routed to each replica (index.go), as llm-d and SGLang do.
package router
