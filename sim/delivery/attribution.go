package delivery

import "math/bits"

// cursor finds, for token numbers that never decrease, the unit of every
// stage holding that token.
type cursor struct{ mi, si, pi, ri int }

// delay returns the server time of token tau (1-based) — when the server
// emitted it, or the watchdog time for a backup token — its server chunk
// index, and the delay each stage added to it up to its visible time v.
func (cu *cursor) delay(st *Stream, tau int, v int64) (ref int64, idx int32, d [NumCauses]int64) {
	for st.merged[cu.mi].cum < tau {
		cu.mi++
	}
	for st.sent[cu.si].cum < tau {
		cu.si++
	}
	for st.packets[cu.pi].cum < tau {
		cu.pi++
	}
	for st.released[cu.ri].cum < tau {
		cu.ri++
	}
	m, s, pk, r := &st.merged[cu.mi], &st.sent[cu.si], &st.packets[cu.pi], &st.released[cu.ri]
	d[CauseFailover] = m.at - m.ref
	d[CauseSmoothingDelay] = (s.at - m.at) + (r.at - pk.at)
	d[CauseNetwork] = (pk.rel - s.at) + pk.parts[partNetwork] + (v - r.at)
	d[CausePacketLoss] = pk.parts[partLoss]
	d[CauseConnection] = pk.parts[partConnection]
	return m.ref, m.idx, d
}

// attribute splits every client gap. The gap before client chunk k is the
// wait from the last token the user saw (chunk k−1's last) to the next one
// (chunk k's first): consecutive tokens. It is the server's interval
// between them plus the change in each stage's delay; settle then makes the
// parts non-negative.
func (p *Path) attribute(st *Stream, req *Request, out *Result) {
	var cu cursor
	var lastRef int64
	var lastD [NumCauses]int64
	tau := 0
	for k, c := range out.Client {
		firstRef, firstIdx, firstD := cu.delay(st, tau+1, c.At)
		if k == 0 {
			out.TTFTParts = firstD
			out.TTFTParts[CauseServer] = firstRef - req.Arrival
		} else {
			var row [NumCauses]int64
			row[CauseServer] = firstRef - lastRef
			for i := CauseServer + 1; i < NumCauses; i++ {
				row[i] = firstD[i] - lastD[i]
			}
			settle(&row, c.At-out.Client[k-1].At)
			out.Parts = append(out.Parts, row)
		}
		tau += c.Tokens
		var lastIdx int32
		lastRef, lastIdx, lastD = firstRef, firstIdx, firstD
		if c.Tokens > 1 {
			lastRef, lastIdx, lastD = cu.delay(st, tau, c.At)
		}
		out.ServerFirst = append(out.ServerFirst, firstIdx)
		out.ServerLast = append(out.ServerLast, lastIdx)
	}
}

// settle makes a gap's parts non-negative while keeping their sum: when a
// delay shrank between two chunks (a negative part), the shrinkage is taken
// from the positive parts in proportion to their size, i.e. each positive
// part is scaled by gap / Σ positive parts, in exact integer arithmetic
// (largest remainder, ties to the earlier cause).
func settle(row *[NumCauses]int64, gap int64) {
	neg := false
	var w [NumCauses]int64
	for i, v := range row {
		if v < 0 {
			neg = true
		} else {
			w[i] = v
		}
	}
	if !neg {
		return
	}
	apportion(gap, w[:], row[:])
}

// apportion splits total (≥ 0) into out in proportion to the weights
// (≥ 0, at most 8 of them), exactly: ⌊total·w/Σw⌋ each in 128-bit
// arithmetic, then one more to the largest remainders (ties to the lower
// index). With all weights zero the whole total goes to index 0 (callers
// never ask for that: a positive total always has a positive weight).
func apportion(total int64, weights, out []int64) {
	var sum uint64
	for i, w := range weights {
		sum += uint64(w)
		out[i] = 0
	}
	if total <= 0 {
		return
	}
	if sum == 0 {
		out[0] = total
		return
	}
	var rem [8]uint64
	var given int64
	for i, w := range weights {
		if w == 0 {
			continue
		}
		var q, r uint64
		if hi, lo := bits.Mul64(uint64(w), uint64(total)); hi == 0 {
			q, r = lo/sum, lo%sum
		} else {
			q, r = bits.Div64(hi, lo, sum) // hi < sum: the quotient is ≤ total
		}
		out[i], rem[i] = int64(q), r
		given += int64(q)
	}
	for left := total - given; left > 0; left-- {
		best := -1
		for i := range weights {
			if weights[i] > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		out[best]++
		rem[best] = 0
	}
}

// ceilDiv is ⌈a/b⌉ for b > 0 and any a.
func ceilDiv(a, b int64) int64 {
	if a > 0 {
		return (a + b - 1) / b
	}
	return a / b // truncation toward zero is the ceiling for a ≤ 0
}
