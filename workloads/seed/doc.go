// Package seed holds the pieces every seeded random stream of itlsim is
// built from: Mix, SplitMix64's output function (a bijection whose output
// bits each depend on every input bit), Hash, the FNV-1a hash that turns a
// stream's name into a number, and Rand, a SplitMix64 generator of one
// uint64 of state with exact normal and exponential draws. A run derives
// one stream per subsystem and per request from its seed with these, so
// adding draws to one stream never shifts another's.
//
// Start reading at Rand. The package imports nothing of the project: the
// workloads, the simulator, speculative decoding and the delivery path all
// build on it.
package seed
