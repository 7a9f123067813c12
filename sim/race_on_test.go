//go:build race

package sim_test

// raceEnabled is set when the tests run under the race detector
// (go test -race), which makes the engine 5–10× slower and allocates on
// its own: the heavy property tests draw fewer scenarios, and the
// allocation bounds are not checked.
const raceEnabled = true
