// Package jitter models a replica's server-side step-time variation: a
// lognormal factor on every step's priced time (mean 1, coefficient of
// variation cost.noise_cv), a configured scale of every step time
// (cost.step_time_scale), and engine hiccups, pauses of a fixed length at
// the first step start after each point of a Poisson process
// (cost.hiccup_rate_per_s, cost.hiccup_ms).
//
// Start reading at [New]; the engine calls [Jitter.Factor] and
// [Jitter.Hiccup] once per step. The noise and the hiccups each draw from a
// stream of their own under the replica's seed ("step-noise", "hiccups"),
// so turning one on never shifts the other's draws or any other
// subsystem's.
package jitter
