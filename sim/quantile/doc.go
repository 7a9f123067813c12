// Package quantile holds the two percentile tools itlsim uses everywhere:
// [Linear], numpy's default percentile (linear interpolation between closest
// ranks, the definition vLLM's benchmarks use), applied to exact sorted
// samples; and [Histogram], a mergeable log-linear histogram of non-negative
// integers (nanoseconds in practice) for populations too large to keep, such
// as every gap of a million-stream run.
//
// Start with Linear; read Histogram when you need pooled statistics whose
// memory must not grow with the number of samples.
package quantile
