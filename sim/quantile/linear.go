package quantile

import "math"

// Linear returns the q-quantile (0 ≤ q ≤ 1) of sorted, ascending values by
// linear interpolation between closest ranks: with h = (n−1)·q, the result
// is x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). This is numpy.percentile's
// default method, so figures match vLLM's benchmark tooling on the same
// data. It returns NaN for an empty slice.
func Linear[T int64 | float64](sorted []T, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo < 0 {
		return float64(sorted[0])
	}
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	a, b := float64(sorted[lo]), float64(sorted[lo+1])
	return a + (h-float64(lo))*(b-a)
}
