package delivery

import (
	"math/bits"
	"slices"
)

// cursor finds, for token numbers that never decrease, the unit of every
// stage holding that token. A stage that is off copies the previous stage's
// list unit for unit (same index, same tokens): its index then follows the
// previous one's without a walk of its own.
type cursor struct {
	mi, si, pi, ri                      int
	sameSent, samePackets, sameReleased bool
}

func (p *Path) newCursor() cursor {
	return cursor{
		sameSent:     p.windowNS == 0,
		samePackets:  p.mode != ModeBuffer && p.mode != ModeNagle, // coalesce's default
		sameReleased: p.cadenceNS == 0,
	}
}

// tokenDelay is where one token came from and what delayed it: its server
// chunk index and, by cause, the delay each stage added to it up to its
// visible time — except at CauseServer, which holds the token's server time
// itself (when the server emitted it, or the watchdog time for a backup
// token). So the difference of two tokens' tokenDelays is, cause by cause,
// the unsettled split of the gap between them.
type tokenDelay struct {
	d   [NumCauses]int64
	idx int32
}

// delay fills td for token tau (1-based), visible at v.
func (cu *cursor) delay(st *Stream, tau int, v int64, td *tokenDelay) {
	// Walk on local copies of the indices: stores through cu would make the
	// compiler reload the lists on every step.
	mi, si, pi, ri := cu.mi, cu.si, cu.pi, cu.ri
	merged, sent, packets, released := st.merged, st.sent, st.packets, st.released
	for merged[mi].cum < tau {
		mi++
	}
	if cu.sameSent {
		si = mi
	} else {
		for sent[si].cum < tau {
			si++
		}
	}
	if cu.samePackets {
		pi = si
	} else {
		for packets[pi].cum < tau {
			pi++
		}
	}
	if cu.sameReleased {
		ri = pi
	} else {
		for released[ri].cum < tau {
			ri++
		}
	}
	cu.mi, cu.si, cu.pi, cu.ri = mi, si, pi, ri
	m, s, pk, r := &merged[mi], &sent[si], &packets[pi], &released[ri]
	td.idx = m.idx
	td.d[CauseServer] = m.ref
	td.d[CauseFailover] = m.at - m.ref
	td.d[CauseSmoothingDelay] = (s.at - m.at) + (r.at - pk.at)
	td.d[CauseNetwork] = (pk.rel - s.at) + pk.parts[partNetwork] + (v - r.at)
	td.d[CausePacketLoss] = pk.parts[partLoss]
	td.d[CauseConnection] = pk.parts[partConnection]
}

// index returns the index in Request.Chunks of the server chunk holding
// token tau (1-based), or −1 for a backup token, advancing only the first
// stage's walk: delay catches the other stages up when it is called.
func (cu *cursor) index(st *Stream, tau int) int32 {
	mi, merged := cu.mi, st.merged
	for merged[mi].cum < tau {
		mi++
	}
	cu.mi = mi
	return merged[mi].idx
}

// attribute splits the client gaps longer than req.PartsOver. The gap
// before client chunk k is the wait from the last token the user saw
// (chunk k−1's last) to the next one (chunk k's first): consecutive tokens.
// It is the server's interval between them plus the change in each stage's
// delay; settle then makes the parts non-negative. Shorter gaps' rows are
// zero; every chunk gets its ServerFirst and ServerLast.
func (p *Path) attribute(st *Stream, req *Request, out *Result) {
	// The output lists have one entry per client chunk (Parts one fewer):
	// size them once and fill them in place rather than append row by row.
	n := len(out.Client)
	out.Parts = slices.Grow(out.Parts[:0], n-1)[:n-1]
	out.ServerFirst = slices.Grow(out.ServerFirst[:0], n)[:n]
	out.ServerLast = slices.Grow(out.ServerLast[:0], n)[:n]
	cu := p.newCursor()
	var first, last tokenDelay
	tau := 0
	for k, c := range out.Client {
		if k == 0 {
			cu.delay(st, 1, c.At, &first)
			out.TTFTParts = first.d
			out.TTFTParts[CauseServer] = first.d[CauseServer] - req.Arrival
			out.ServerFirst[0] = first.idx
		} else {
			row := &out.Parts[k-1]
			if prev := out.Client[k-1].At; c.At-prev > req.PartsOver {
				// The last token of chunk k−1, then the first of chunk k:
				// token numbers never decrease, as the cursor needs.
				cu.delay(st, tau, prev, &last)
				cu.delay(st, tau+1, c.At, &first)
				out.ServerFirst[k] = first.idx
				var or int64 // negative when a part is: see settle
				for i := range row {
					row[i] = first.d[i] - last.d[i]
					or |= row[i]
				}
				if or < 0 {
					settle(row, c.At-prev)
				}
			} else {
				*row = [NumCauses]int64{}
				out.ServerFirst[k] = cu.index(st, tau+1)
			}
		}
		tau += c.Tokens
		out.ServerLast[k] = cu.index(st, tau)
	}
}

// settle makes a gap's parts non-negative while keeping their sum: when a
// delay shrank between two chunks (a negative part), the shrinkage is taken
// from the positive parts in proportion to their size, i.e. each positive
// part is scaled by gap / Σ positive parts, in exact integer arithmetic
// (largest remainder, ties to the earlier cause).
func settle(row *[NumCauses]int64, gap int64) {
	// The OR of the parts is negative exactly when one of them is: most
	// rows have none, and need nothing more.
	var or int64
	for _, v := range row {
		or |= v
	}
	if or >= 0 {
		return
	}
	apportion(gap, row, row) // the row is its own weights; negative parts weigh nothing
}

// apportion splits total (≥ 0) into out in proportion to the positive
// weights (a weight ≤ 0 gets nothing), exactly: ⌊total·w/Σw⌋ each in
// 128-bit arithmetic, then one more to the largest remainders (ties to the
// lower index). With no positive weight the whole total goes to index 0
// (callers never ask for that: a positive total always has a positive
// weight). out may be weights itself: each weight is read before its own
// slot is written, and the remainders alone pick who gets one more.
//
// Fixed-size arrays rather than slices: no bounds checks, and no copy of
// the caller's row into a separate weight array.
func apportion(total int64, weights, out *[NumCauses]int64) {
	var sum uint64
	positive, only := 0, 0
	for i, w := range weights {
		if w > 0 {
			sum += uint64(w)
			positive, only = positive+1, i
		}
	}
	if total <= 0 || sum == 0 || positive == 1 {
		// Nothing to split; or nothing to weigh by, and index 0 takes it
		// all; or one weight takes it all (its quotient is exactly total,
		// with no remainder).
		if sum == 0 {
			only = 0
		}
		for i := range out {
			out[i] = 0
		}
		if total > 0 {
			out[only] = total
		}
		return
	}
	var rem [NumCauses]uint64
	var given int64
	for i, w := range weights {
		if w <= 0 {
			out[i] = 0
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
	// total − given = Σ remainders / sum, and every remainder is < sum, so
	// each round below still has a positive remainder to pick: the largest
	// is always a positive weight's, as the rule asks.
	for left := total - given; left > 0; left-- {
		best := 0
		for i := 1; i < len(rem); i++ {
			if rem[i] > rem[best] {
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
