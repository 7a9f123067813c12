// Package serve puts itlsim's simulation behind an OpenAI-compatible HTTP
// API (itlsim serve): clients send completions and chat completions, and
// each response streams its chunks when the simulated replica emits them,
// in real time, so a real client, router or benchmark sees the timing of
// the continuous-batching simulation, load-dependent queueing, KV pressure
// and prefill interference included.
//
// Start reading at [Server]: [New] wraps a resolved scenario, [NewReplay]
// recorded streams. The pieces:
//
//   - driver.go runs the engine in real time. One goroutine owns the
//     engine; simulated time is (wall − t0) × time scale. A request joins
//     the engine at its wall-clock arrival through a workloads.Queue (a
//     reactive source), the driver sleeps until the engine's next event
//     (Engine.NextEventAt) and releases every chunk to its response as the
//     engine emits it (sim.Observer).
//   - replay.go plays recorded streams instead: each request gets the next
//     stream of the file, its chunks at their recorded offsets.
//   - http.go is the API: /v1/completions, /v1/chat/completions (server-sent
//     events or one JSON body), /v1/models, /health; a rejection is an HTTP
//     error with an OpenAI-style JSON body. A cluster is served on one port
//     behind the engine's router, or (Options.PerReplica) one port per
//     replica for a real router in front: port i's requests are pinned to
//     replica i (Engine.Pin) and its /metrics follow replica i alone.
//   - metrics.go is /metrics in Prometheus' text format under vLLM's metric
//     names, observed in simulated seconds.
//
// The core packages (sim, scheduler, kvcache) stay free of goroutines and
// clocks: everything real-time lives here.
package serve
