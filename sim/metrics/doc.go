// Package metrics holds the thresholds a run's results are judged by:
// the stall threshold, ITL goodput's θ, the jitter bound, per-request SLO
// limits, the percentiles shown and the QoE expectation (Config). Start at
// Config.
package metrics
