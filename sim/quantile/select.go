package quantile

// StreamStats returns the p50, p90 and p99 (numpy's linear
// interpolation, as Linear on the sorted values) and the maximum of
// xs, reordering xs in place. It selects the few ranks it needs instead of
// sorting: a finished stream's gaps are summarized this way once per
// request. xs must not be empty.
func StreamStats(xs []int64) (p50, p90, p99 float64, max int64) {
	n := len(xs)
	lo := 0
	// Ranks ascend, so each selection runs on the part above the last.
	at := func(q float64) float64 {
		h := float64(n-1) * q
		k := int(h)
		selectK(xs, lo, n-1, k)
		lo = k
		a := float64(xs[k])
		if k+1 >= n || h == float64(k) {
			return a
		}
		b := xs[k+1]
		for _, v := range xs[k+2:] {
			if v < b {
				b = v
			}
		}
		return a + (h-float64(k))*(float64(b)-a)
	}
	p50, p90, p99 = at(0.50), at(0.90), at(0.99)
	max = xs[lo]
	for _, v := range xs[lo:] {
		if v > max {
			max = v
		}
	}
	return p50, p90, p99, max
}

// selectK reorders xs[lo..hi] so that xs[k] holds the value of rank k, the
// values before it are ≤ it and those after ≥ it (Hoare's quickselect with
// a median-of-three pivot; deterministic).
func selectK(xs []int64, lo, hi, k int) {
	for hi > lo {
		if hi-lo < 16 {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && xs[j] < xs[j-1]; j-- {
					xs[j], xs[j-1] = xs[j-1], xs[j]
				}
			}
			return
		}
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
