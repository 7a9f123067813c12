package benchalias

import "testing"

// vLLM's random dataset draws lengths uniform in [⌊n·(1−r)⌋, ⌈n·(1+r)⌉],
// at least 1; r = 0 is a fixed length.
func TestRandomLenIsVLLMRange(t *testing.T) {
	for _, c := range []struct {
		n    int
		r    float64
		want string
	}{{1024, 0, "fixed:1024"}, {100, 0.25, "uniform:75,125"}, {3, 0.9, "uniform:1,6"}} {
		if got := RandomLen(c.n, c.r); got != c.want {
			t.Errorf("RandomLen(%d, %v) = %s, want %s", c.n, c.r, got, c.want)
		}
	}
}
