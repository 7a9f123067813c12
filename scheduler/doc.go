// Package scheduler models a continuous-batching scheduler in the style of
// vLLM: which waiting requests start, how a step's token budget is shared
// between decodes and prefill chunks, and which running sequence is preempted
// when the KV cache cannot grow.
//
// Start with [Scheduler.Schedule], which forms one step's [Plan]. It delegates
// each decision to a small interface, built by name from an explicit registry:
//
//   - [Batcher] forms the batch: chunked (vLLM v1 / Sarathi-Serve),
//     prefill-first (vLLM v0), orca, static.
//   - [Admission] decides whether an arriving request is queued or rejected
//     and whether the queue's head may start: always, kv-watermark,
//     kv-reserve, max-queue, token-bucket.
//   - [Order] orders the waiting queue: fcfs, priority, shortest-prompt-first.
//   - [Victim] picks the running sequence to preempt: newest, lowest-priority.
//
// Config.Preemption says what a preemption does: recompute (free the
// victim's blocks), swap (copy them to CPU) or pause (the sequence that
// cannot grow keeps its blocks and is left out of the step, listed in
// Plan.Paused; when every running sequence is paused the victim is
// recomputed so the others can grow).
//
// A sequence is a [Seq] value owned by the caller; the scheduler keeps
// pointers to the waiting and running ones and never allocates per step.
// The hot path is chunked's decode loop (batchers.go): a plain decode whose
// blocks have room is planned in a loop without calls, its entry written
// over the last plan's (planDecodesFast; Scheduler.SetReference plans
// every decode through scheduleRunning instead, with the same plans); the
// plan sums its decodes' context as it forms (Plan.DecodeContext) so that
// pricing a step reads only prefill entries. The batchers walk the running set itself (Scheduler.snap) until a
// preemption moves it (TestPlanUnderPreemption). The
// package knows nothing of time beyond the "now" it is handed and nothing of
// step durations: the engine in package sim prices the plan and applies it.
package scheduler
