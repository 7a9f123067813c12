//go:build !race

package sim_test

// raceEnabled is set when the tests run under the race detector (see
// race_on_test.go).
const raceEnabled = false
