// Package calibrate holds the simulator against measurements: it turns a
// measured run (anything reports/ingest reads) into the requests it served
// and simulates exactly those ([Validate]), compares the figures, and fits
// the step cost model to measurements — step timings or whole runs — writing
// a profile that scenarios load ([Profile]).
//
// Start with [Validate] and [Offer] (validate.go): how a measured run's
// requests are offered again — its own start times when the file has them,
// else the tool's schedule (Poisson at its rate over several seeds, all at
// once, a closed loop for a concurrency cap; closed.go). Fitting: [FitLinear]
// (non-negative least squares) and [FitRoofline] to step timings read by
// [ReadSteps] (fit.go, steps.go); [Tune] fits the roofline and the server
// overhead to measured runs with the simulation in the loop (tune.go);
// [Profile] is the file both write and scenarios load (profile.go).
// [CheckAll] (check.go) prices the shapes of public measurements (H100
// kernels, Vidur's layer profiles, Sarathi-Serve's hybrid batches, a vLLM
// run) with the default roofline and returns one predicted-versus-measured
// row each, for its tests to assert and `itlsim cost check` to print.
//
// It sits above the engine with the other readers of measured files
// (reports, reports/ingest): it reads files and runs many simulations, while
// the engine (sim) and the cost models (sim/cost) take their configuration as
// values, do no I/O and import nothing of it.
package calibrate
