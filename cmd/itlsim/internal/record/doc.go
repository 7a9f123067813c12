// Package record is a load generator for OpenAI-compatible servers (vLLM,
// SGLang, TGI, itlsim serve) that records every stream's chunk times
// (itlsim record): it sends a workload's requests at their arrival times,
// with their prompt and output lengths, and keeps the arrival time of each
// chunk of each streamed response and its token count.
//
// Start reading at [Run]: it takes a workloads.Source (the scenario's
// arrivals, a closed loop included), sends each request when it is due (up
// to a concurrency cap), and returns a [Result] with one [Stream] per
// request, failed ones with their error, never dropped. [WriteStreams]
// writes them in itlsim's stream format, which analyze and gate read.
//
// Time: recorded times are seconds from the start of the run, multiplied
// by the time scale (1 for a real server; serve's --time-scale for an
// itlsim serve run faster or slower than real time, so the file is in the
// simulation's seconds). Cancelling the context stops sending; requests in
// flight end as cancelled and the result holds everything recorded so far.
package record
