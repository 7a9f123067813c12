// Package study runs many simulations and reduces them to the answers
// capacity planners ask for: a load sweep with each configuration's
// saturation point and knee ([RunSweep], [AnalyzeSweep]), the highest
// arrival rate at which every SLO term holds ([Capacity]), the smallest
// replica count or cheapest configuration for a target rate, the cost of
// each at its capacity and the Pareto front over configurations.
//
// Start with [Map]: every study is a list of independent simulations run
// on a fixed number of workers, with results in input order and a progress
// callback, so output never depends on the number of workers. [Measure]
// turns one run into the figures a point reports, over a measurement
// window that leaves out the warm-up and the drain ([Window]). The shard
// files of a study split across machines (Kubernetes Indexed Jobs) are
// written and read by [Dir].
//
// The package does no printing; the cmd package wires flags to it and
// renders its results through the writers in this package and reports/html.
package study
