// Package reports turns simulation results into the numbers users read:
// [Summarize] reduces a sim.Result to a [Summary] (the JSON contract's
// per-run summary, in milliseconds), [NewDocument] builds the whole JSON
// document (scenario, runs, streams, time series), and the table writers
// print runs side by side for a terminal or a pull-request comment.
//
// Start with Summarize: every metric definition in the README is
// implemented there, in the order the README lists them. Percentiles are
// numpy's linear interpolation between closest ranks (package
// sim/quantile), as vLLM's benchmarks compute them.
package reports
