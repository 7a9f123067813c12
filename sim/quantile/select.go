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
// values before it are ≤ it and those after ≥ it: quickselect with a
// median-of-three pivot. The partition has no branch on the data (the swap
// is unconditional and the boundary moves by the comparison's result): a
// stream's gaps compare unpredictably, and a mispredicted branch per
// element cost more than the swaps. When the pivot is the range's minimum
// the values equal to it are split off, so ties cannot stall it.
// Deterministic.
func selectK(xs []int64, lo, hi, k int) {
	for hi-lo >= 16 {
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c)) // the median of the three
		// Over a subslice, so that ranging over it leaves one bounds check
		// (the boundary's) per value.
		part, lt := xs[lo:hi+1], 0
		for j, v := range part {
			part[j] = part[lt]
			part[lt] = v
			lt += less(v, pivot)
		}
		lt += lo
		// xs[lo..lt) < pivot ≤ xs[lt..hi]; the pivot is in the range, so lt ≤ hi.
		switch {
		case k < lt:
			hi = lt - 1
		case lt > lo:
			lo = lt
		default:
			// The pivot is the minimum: the values equal to it go first.
			eq := lt
			for j := lt; j <= hi; j++ {
				v := xs[j]
				xs[j] = xs[eq]
				xs[eq] = v
				eq += equal(v, pivot)
			}
			if k < eq {
				return
			}
			lo = eq
		}
	}
	rest := xs[lo : hi+1]
	for i := 1; i < len(rest); i++ {
		for j := i; j > 0 && rest[j] < rest[j-1]; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
}

// less is 1 when a < b, else 0; the compiler makes it a flag set, not a
// branch.
func less(a, b int64) int {
	x := 0
	if a < b {
		x = 1
	}
	return x
}

// equal is 1 when a == b, else 0, as less.
func equal(a, b int64) int {
	x := 0
	if a == b {
		x = 1
	}
	return x
}
