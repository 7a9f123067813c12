// Package reports turns simulation results into the numbers users read:
// [Summarize] reduces a sim.Result to a [Summary] (the JSON contract's
// per-run summary, in milliseconds), [NewDocument] builds the whole JSON
// document (scenario, runs, streams, time series), and the table writers
// print runs side by side for a terminal or a pull-request comment.
//
// Start with Summarize: every metric definition in the README is
// implemented there, in the order the README lists them. Percentiles are
// numpy's linear interpolation between closest ranks (package
// sim/quantile), as vLLM's benchmarks compute them; metrics.percentiles
// chooses which a [Dist] shows (dist.go), and a distribution of an empty
// population is undefined (N = 0: null in JSON, n/a in tables). A
// [Summary] keeps its sorted populations, so [Summary.Percentile] gives
// any percentile (package reports/slo judges SLO terms with it). vllm.go
// writes the summary under vLLM's result keys. The per-stream perceived
// scores come from package reports/qoe.
package reports
