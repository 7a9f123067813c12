package delivery

import (
	"math"
	"math/bits"
	"slices"

	"github.com/itlsim/itlsim/workloads/seed"
)

// The stages of the path, in the order Deliver runs them. Each reads the
// previous stage's list from the Stream and writes its own.

// failover copies the server chunks, or — when the watchdog fires — the
// primary's chunks before it and the backup's for the rest.
func (p *Path) failover(st *Stream, req *Request, out *Result) {
	// The list is built in a local slice (kept in registers, not written back
	// through st on every append); a watchdog that is off never fires.
	merged := st.merged[:0]
	watchdog := p.watchdogNS
	if watchdog == 0 {
		watchdog = math.MaxInt64
	}
	cum, last := 0, req.Arrival
	for j, c := range req.Chunks {
		if c.At-last > watchdog { // ≥ 0: Deliver checked the order
			st.merged = merged
			total := cum
			for _, c := range req.Chunks[j:] {
				total += max(c.Tokens, 1)
			}
			out.FailoverBefore = j
			p.toBackup(st, req, out, last+p.watchdogNS, cum, total)
			return
		}
		cum += max(c.Tokens, 1)
		merged = append(merged, serverUnit{at: c.At, ref: c.At, cum: cum, idx: int32(j)})
		last = c.At
	}
	st.merged = merged
	if req.CancelledAt != 0 && p.watchdogNS > 0 && req.Output > cum {
		// The server gave up on the stream when the watchdog fired: the
		// backup produces the rest.
		out.FailoverBefore = len(req.Chunks)
		p.toBackup(st, req, out, req.CancelledAt, cum, req.Output)
	}
}

// toBackup re-issues the rest of the stream to the backup at the watchdog
// time fire, when done of total tokens have been produced: the backup pays
// its overhead and a prefill of prompt + done tokens for the first token,
// then one decode step per token. Step times are the roofline's at the
// first and last context, interpolated linearly between (the roofline is
// linear in context within a step of fixed composition).
func (p *Path) toBackup(st *Stream, req *Request, out *Result, fire int64, done, total int) {
	out.Failovers, out.FailoverAt = 1, fire
	out.CoherenceBreak = done > 0 && !p.sameModel
	ctx := req.PromptTokens + done
	t := fire + p.backupOverheadNS + p.backupPrefill(&st.batch, ctx)
	rest := total - done
	s0 := p.backupStep(&st.batch, ctx+1)
	s1 := p.backupStep(&st.batch, ctx+rest-1)
	span := int64(max(rest-2, 1))
	for i := range rest {
		if i > 0 {
			t += s0 + (s1-s0)*int64(i-1)/span
		}
		st.merged = append(st.merged, serverUnit{at: t, ref: fire, cum: done + i + 1, idx: -1})
	}
	if req.CancelledAt == 0 { // the primary ran to the end: compare the finishes
		out.FailoverSaved = req.Chunks[len(req.Chunks)-1].At - t
	}
}

// flush applies accept-then-flush: the first chunk at once, then one write
// per window boundary carrying every token produced up to it.
func (p *Path) flush(st *Stream) {
	sent := st.sent[:0] // local until the end, as in failover
	m := st.merged
	if p.windowNS == 0 {
		for _, u := range m {
			sent = append(sent, sentUnit{at: u.at, cum: u.cum, events: 1})
		}
		st.sent = sent
		return
	}
	w := p.windowNS
	sent = append(sent, sentUnit{at: m[0].at, cum: m[0].cum, events: 1})
	tick := m[0].at + w
	pending, cum, events := false, 0, int32(0)
	for _, u := range m[1:] {
		if u.at > tick {
			if pending {
				sent = append(sent, sentUnit{at: tick, cum: cum, events: events})
				pending, events = false, 0
			}
			tick += ceilDiv(u.at-tick, w) * w
		}
		pending, cum, events = true, u.cum, events+1
	}
	if pending {
		sent = append(sent, sentUnit{at: tick, cum: cum, events: events})
	}
	st.sent = sent
}

// coalesce merges writes in the proxy or TCP buffer into packets.
func (p *Path) coalesce(st *Stream) {
	pks := st.packets[:0] // local until the end, as in failover
	s := st.sent
	switch p.mode {
	case ModeBuffer:
		pending, deadline, bytes, toks, cum, prev := false, int64(0), 0, 0, 0, 0
		for _, u := range s {
			if pending && p.bufFlushNS > 0 && u.at >= deadline {
				pks = appendPacket(pks, deadline, cum)
				pending = false
			}
			if !pending {
				pending, deadline, bytes, toks = true, u.at+p.bufFlushNS, 0, 0
			}
			t := u.cum - prev
			prev, cum = u.cum, u.cum
			bytes += int(u.events)*p.eventBytes + t*p.tokenBytes
			toks += t
			if p.full(bytes, toks) {
				pks = appendPacket(pks, u.at, cum)
				pending = false
			}
		}
		if pending { // the end of the response flushes the proxy
			pks = appendPacket(pks, s[len(s)-1].at, cum)
		}
	case ModeNagle:
		ackAt := int64(math.MinInt64) // when the segment in flight is acknowledged
		pending, bytes, toks, cum, prev := false, 0, 0, 0, 0
		for _, u := range s {
			if pending && ackAt <= u.at {
				pks = appendPacket(pks, ackAt, cum)
				pending, ackAt = false, ackAt+p.ackWaitNS
			}
			if !pending {
				pending, bytes, toks = true, 0, 0
			}
			t := u.cum - prev
			prev, cum = u.cum, u.cum
			bytes += int(u.events)*p.eventBytes + t*p.tokenBytes
			toks += t
			if ackAt <= u.at || p.full(bytes, toks) {
				pks = appendPacket(pks, u.at, cum)
				pending, ackAt = false, u.at+p.ackWaitNS
			}
		}
		if pending {
			pks = appendPacket(pks, max(s[len(s)-1].at, ackAt), cum)
		}
	default:
		for _, u := range s {
			pks = appendPacket(pks, u.at, u.cum)
		}
	}
	st.packets = pks
}

// appendPacket appends a packet released at rel holding the tokens up to
// cum. It stores the fields one by one: appending a packet{…} literal builds
// it on the stack and copies it over, which stalls the CPU on store
// forwarding (a packet has an array, so the compiler keeps it in memory).
func appendPacket(pks []packet, rel int64, cum int) []packet {
	pks = slices.Grow(pks, 1)
	pks = pks[:len(pks)+1]
	pk := &pks[len(pks)-1]
	pk.rel, pk.at, pk.cum = rel, 0, cum
	pk.parts[0], pk.parts[1], pk.parts[2] = 0, 0, 0 // (a [3]int64{} goes through the stack too)
	return pks
}

// full reports whether a coalescing buffer holding bytes and toks releases.
func (p *Path) full(bytes, toks int) bool {
	return (p.sizeBytes > 0 && bytes >= p.sizeBytes) || (p.sizeTokens > 0 && toks >= p.sizeTokens)
}

// transmit carries each packet to the client: latency and jitter, losses
// and retransmission timeouts, connection drops and reconnects, in order
// (a late packet holds back the ones behind it).
func (p *Path) transmit(st *Stream, req *Request, out *Result) {
	// The previous packet's arrival and parts, in scalars rather than a
	// [3]int64: an array stored element by element and then copied whole
	// stalls the CPU on store forwarding, once per packet.
	prevAt := int64(math.MinInt64)
	var prevNet, prevLoss, prevConn int64
	upAt := req.Arrival
	nextDrop := int64(math.MaxInt64)
	if p.dropPerNS > 0 {
		nextDrop = req.Arrival + p.dropInterval(&st.conn)
	}
	// Every packet's latency first, in a loop of its own: with nothing
	// carried from one draw to the next but the random state, the CPU
	// overlaps the draws' logarithms and exponentials, which the loop below
	// (each arrival waits on the previous one) would serialize. The draws
	// come from their own stream, so drawing them all up front changes none.
	if !p.jitter.IsZero() {
		for i := range st.packets {
			st.packets[i].at = p.jitter.sample(&st.lat)
		}
	}
	for i := range st.packets {
		pk := &st.packets[i]
		lat := p.baseNS + pk.at // pk.at holds the jitter until set below
		lossNS := p.lossDelay(st, out)
		for drops := 0; ; drops++ {
			send := max(pk.rel, upAt)
			net, loss, conn := lat, lossNS, send-pk.rel
			at := send + lossNS + lat
			if prevAt > at {
				// Head-of-line blocking: the wait behind the previous packet
				// goes to the causes that made it later than this one.
				if prevLoss <= loss && prevConn <= conn {
					// Only the network made it later (or nothing did:
					// apportion gives a weightless total to index 0, the
					// network, too).
					net += prevAt - at
				} else {
					// By part, how much later the previous packet was; a
					// part it was not later by weighs nothing.
					excess := [NumCauses]int64{partNetwork: prevNet - net, partLoss: prevLoss - loss, partConnection: prevConn - conn}
					var hol [NumCauses]int64
					apportion(prevAt-at, &excess, &hol)
					net, loss, conn = net+hol[partNetwork], loss+hol[partLoss], conn+hol[partConnection]
				}
				at = prevAt
			}
			if nextDrop <= at {
				out.Reconnects++
				if p.failOnDrop || drops == maxDropsPerChunk {
					// Told to fail, or the connection never stays up long
					// enough to carry this chunk: the client gives up.
					out.Failed, out.FailedAt = true, nextDrop
					st.packets = st.packets[:i]
					return
				}
				upAt = nextDrop + p.reconnect.sample(&st.conn)
				nextDrop = upAt + p.dropInterval(&st.conn)
				// The new connection re-sends the chunk: its delay and losses
				// are its own, not the dropped connection's.
				lat = p.baseNS + p.jitter.sample(&st.lat)
				lossNS = p.lossDelay(st, out)
				continue
			}
			pk.at = at
			pk.parts[partNetwork], pk.parts[partLoss], pk.parts[partConnection] = net, loss, conn
			prevAt, prevNet, prevLoss, prevConn = at, net, loss, conn
			break
		}
	}
}

// lossDelay draws one transmission's losses: each attempt is lost with
// probability loss and retried after the retransmission timeout, which
// doubles; it returns the time lost, ns.
func (p *Path) lossDelay(st *Stream, out *Result) int64 {
	if p.loss == 0 {
		return 0
	}
	var lossNS int64
	rto := p.rtoNS
	for a := 0; a < maxAttempts && st.loss.Float64() < p.loss; a++ {
		out.Losses++
		lossNS += rto
		rto = min(2*rto, rtoMaxNS)
	}
	return lossNS
}

// dropInterval draws the time to the next connection drop, ns.
func (p *Path) dropInterval(r *seed.Rand) int64 {
	return int64(min(r.ExpFloat64()/p.dropPerNS, 1e17))
}

// horizonFactor sets how fast the smoothing buffer corrects its depth: a
// deviation from the target is worked off over horizonFactor × depth, so
// the release rate never falls below 1 − 1/horizonFactor of the arrival
// rate while tokens are buffered (a pause drains the buffer at almost the
// full rate instead of stretching the output).
const horizonFactor = 4

// silenceFactor caps each inter-arrival interval in the smoothing buffer's
// rate estimate at this many times the mean interval so far, so that a
// pause does not lower the rate the buffer releases at once it is over.
const silenceFactor = 4

// smooth runs the client smoothing buffer over the packets' arrivals.
func (p *Path) smooth(st *Stream, out *Result) {
	released := st.released[:0] // local until the end, as in failover
	pk := st.packets
	if p.cadenceNS == 0 {
		for _, u := range pk {
			released = append(released, release{at: u.at, cum: u.cum})
		}
		st.released = released
		return
	}
	c, d := p.cadenceNS, p.depthNS
	cf, df := float64(c), float64(d)
	// The release formulas below, with their divisions by constants done once.
	cOverH, cOverD := cf/float64(horizonFactor*d), cf/df
	total := pk[len(pk)-1].cum
	a0 := pk[0].at
	start := a0 + p.initialNS
	if p.initialTokens > 0 {
		for _, u := range pk {
			if u.cum >= p.initialTokens {
				start = min(start, u.at)
				break
			}
		}
	}
	t, j, arrived, rel, credit := start, 0, 0, 0, 1.0
	var span int64 // the arrivals' active span: each interval at most silenceFactor × their mean
	for rel < total {
		for j < len(pk) && pk[j].at <= t {
			if j > 0 {
				iv := pk[j].at - pk[j-1].at
				// iv = min(iv, silenceFactor·span/(j−1)), dividing only when
				// iv exceeds the cap, which is rare (an integer division
				// costs as much as the rest of the loop).
				if hi, lo := bits.Mul64(uint64(iv), uint64(j-1)); j > 1 && (hi != 0 || lo > uint64(silenceFactor*span)) {
					iv = min(iv, silenceFactor*span/int64(j-1))
				}
				span += iv
			}
			arrived = pk[j].cum
			j++
		}
		depth := arrived - rel
		if depth == 0 { // starved: wait for the tick at or after the next arrival
			t += ceilDiv(pk[j].at-t, c) * c
			continue
		}
		// The arrival rate so far, over the active span: a silence (a pause,
		// the end of the stream) does not slow the releases.
		rate := float64(arrived) / float64(max(span, c))
		var n float64
		if j < len(pk) {
			n = rate*cf + (float64(depth)-rate*df)*cOverH
		} else { // the stream has ended: drain within about one depth
			n = rate*cf + float64(depth)*cOverD
		}
		credit += max(n, 0)
		if k := min(depth, int(credit)); k > 0 {
			rel += k
			credit -= float64(k)
			released = append(released, release{at: t, cum: rel})
		}
		if rel == arrived {
			credit = min(credit, 1)
		}
		t += c
	}
	st.released = released
	out.StartupDelay = released[0].at - a0
}

// render makes releases visible at the next frame boundary and merges
// those that share one into a single client chunk.
func (p *Path) render(st *Stream, out *Result) {
	var phase int64
	if p.frameNS > 0 {
		phase = int64(st.frame.Float64() * float64(p.frameNS))
	}
	client := out.Client // local until the end, as in failover
	prev := 0
	for _, r := range st.released {
		v := r.at
		if p.frameNS > 0 {
			v = phase + ceilDiv(r.at-phase, p.frameNS)*p.frameNS
		}
		tok := r.cum - prev
		prev = r.cum
		if n := len(client); n > 0 && client[n-1].At == v {
			client[n-1].Tokens += tok
			continue
		}
		client = append(client, Chunk{At: v, Tokens: tok})
	}
	out.Client = client
	out.Tokens = prev
}
