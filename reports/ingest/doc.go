// Package ingest reads streams measured by benchmark tools — vLLM's
// benchmark results, NVIDIA AIPerf's profile_export.jsonl, GuideLLM's
// benchmark JSON — and itlsim's own stream format (the JSON lines `itlsim run
// --timelines` writes), and turns each into a [Recording]: per request, its
// arrival, token counts, time to first token, and the gaps between its
// visible chunks, in float nanoseconds as the tool measured them.
//
// [Recording.Result] turns a recording into a sim.Result carrying its exact
// times (sim.Measured), so that reports.Summarize computes the same metrics,
// by the same code, for measured and simulated runs. Pooled ITL percentiles
// of a measured run are exact (every gap is kept), where a simulation's use a
// 0.1 % histogram.
//
// Start with [Parse] and [Detect]; each importer's file (vllm.go, aiperf.go,
// guidellm.go, streams.go) documents the fields it reads. Bad input is an
// error naming the file, the record and what was expected; no input panics.
package ingest
