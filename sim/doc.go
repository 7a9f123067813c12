// Package sim is itlsim's engine: a discrete-event simulation of one LLM
// inference replica, or a cluster of them on one clock, that turns a workload
// into per-stream token timelines and reduces them, as they happen, to the
// statistics the reports print.
//
// Start reading at [Engine]: [New] resolves a [Config] (model, GPU, cost
// model, scheduler, KV cache, workload, metrics) into a ready engine;
// [Engine.Step] processes one event and [Engine.Run] runs to the end and
// returns a [Result]. Between steps a test can look at [Engine.Now] and
// each replica's scheduler, cache and streams.
//
// The engine (engine.go) keeps the clock, the event queue, the arrivals,
// the routers (route.go), the KV link (disagg.go) and the replicas. A
// [Replica] (replica.go) is one model instance as a value: its scheduler,
// KV cache, cost model, step-time variation (jitter: noise and hiccups),
// failover watchdog (watchdog.go) and the step it runs (step: the plan,
// the batches it was priced as, its time split by cause); it prices and
// ends its own steps when the engine hands it a step boundary, and each
// call returns an outcome (ends, hand-offs, a step to start) that the
// engine applies to the cluster.
// Each replica has a recorder (recorder.go, and client.go for the client's
// view through a delivery path) that turns its chunks, ends and rejections
// into a [Result]; the engine merges them for the run. Every event names
// its replica. Before the router and the replicas, an open-loop workload
// passes the serving front end (package frontend, [ServerConfig]): by default the
// serial tokenization of each prompt, [DefaultSerialUSPerPromptToken] µs a
// token, as vLLM's API server does it.
//
// Time is [Time], integer nanoseconds since the run started. Simultaneous
// events are ordered by (time, event class, sequence number), so a run is a
// pure function of its configuration and seed. Every random draw comes from
// a stream named under the run seed by package seed ("workload",
// "replica/<i>" then "step-noise" and "hiccups", "router"), so adding a
// consumer never shifts another's draws; each request carries its own
// seed, so every policy compared on a workload sees the same requests with
// the same luck.
//
// The hot path is Replica.endStep (endEntries) and recorder.chunk. Most
// tokens close a gap that is exactly the step just ended (the stream was
// in the previous step too); such a gap takes the step's split by cause
// (checked once per step), extends the stream's run of indexes into the
// replica's step log instead of a gap list of its own, and is counted per
// step by position, class and chunk size, the histograms taking each
// step's counts in a few records (flushStep). wholeSteps does this itself,
// in a loop without calls, for a one-token chunk that does not end its
// stream and fills no KV block on a replica with nothing else to tell;
// recorder.chunk takes every other chunk. Other gaps (a stream left out,
// paused, swapped, recomputed, handed over, or watched for failover)
// accumulate their split in request.acc and are recorded one by one. A
// request's per-token fields share its first cache line, its scheduler
// fields the next (TestRequestHotLayout).
//
// Config.Reference runs the straightforward step instead: every gap
// accumulates its split and is recorded as it closes, the batch is priced
// entry by entry and the scheduler plans every decode through its general
// case. Its results are byte-identical (reports/study's TestReferencePath,
// TestWholeStepsIsTheReference); each specialisation the other step keeps
// says beside it what it buys.
//
// A stream that ends leaves its request slot as an ended value (finisher.go)
// that reduce turns into its summary, timeline and worst-stream entry.
// Engine.Run, while the process has two cores per running engine and no
// delivery path or observer reads results as streams end, hands these to a
// second goroutine (the finisher) that reduces them in the order they ended,
// so the results are the same bytes as reducing each at once; stepping the
// engine by hand reduces each at once.
//
// The engine does no I/O, keeps no global state but the count of engines
// inside Run (which picks the goroutine, never a result), and allocates nothing per
// token or per step once its buffers have grown: a finished stream leaves
// only a fixed-size [StreamSummary] (144 bytes, in the chunks of
// [Summaries], which never copy), so memory grows with the number of
// active streams, not with the tokens simulated.
//
// Speculative decoding (package specdecode) and prefix caching (package
// kvcache) are composed here: the engine chooses each stream's drafts,
// prices drafting and verification, draws acceptances and releases rejected
// slots; after every step it has the scheduler cache the KV blocks the
// step filled (automatic prefix caching, kvcache.Manager.RegisterPrefix).
//
// With a delivery path configured (package delivery), every finished stream
// also goes through it (client.go): [Engine.Result] is then the client's
// view and [Engine.ServerResult] the server's. A failover watchdog aborts a
// stalled stream on the replica and hands the rest to the path's backup
// (watchdog.go).
//
// A cluster whose pools have the roles prefill and decode is disaggregated
// (disagg.go): a prefill replica computes a prompt and samples its first
// token, hands the request off, and its KV cache crosses the cluster's KV
// link (a FIFO pipe; one evTransferEnd event per transfer) to a decode
// replica, which streams the first token at the landing and decodes the
// rest.
//
// A real-time driver (itlsim serve) uses live.go: it feeds requests through
// a workloads.Queue and [Engine.Wake], sleeps until [Engine.NextEventAt],
// sees chunks and ends through an [Observer], and aborts requests whose
// client left (or that it cuts) with [Engine.Abort], which end failed with
// the reason given. The engine itself never reads a clock.
//
// Sub-packages: cost prices a step (roofline or linear) and holds the model
// and GPU presets; quantile holds numpy-style percentiles and the mergeable
// histogram used for pooled statistics; scenario reads scenario files and
// applies overrides and comparisons; delivery models the path from server
// to client.
package sim
