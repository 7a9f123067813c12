package seed

import (
	"hash/fnv"
	"testing"
)

// Hash is FNV-1a, as the standard library computes it, and Mix is the
// SplitMix64 finalizer: streams derived before this package existed keep
// their values.
func TestHashAndMixAreTheKnownFunctions(t *testing.T) {
	for _, name := range []string{"", "workload", "delivery/latency", "step-noise"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		if got, want := Hash(name), h.Sum64(); got != want {
			t.Errorf("Hash(%q) = %#x, want FNV-1a %#x", name, got, want)
		}
	}
	// SplitMix64's first output from state 0 (the reference
	// implementation's known value).
	if got := Mix(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("Mix(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
	r := FromState(0)
	if got := r.Uint64(); got != Mix(0) {
		t.Errorf("first draw from state 0 = %#x, want Mix(0)", got)
	}
}
