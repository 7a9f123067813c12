package delivery

import "math"

// The stages of the path, in the order Deliver runs them. Each reads the
// previous stage's list from the Stream and writes its own.

// failover copies the server chunks, or — when the watchdog fires — the
// primary's chunks before it and the backup's for the rest.
func (p *Path) failover(st *Stream, req *Request, out *Result) {
	st.merged = st.merged[:0]
	total := 0
	for _, c := range req.Chunks {
		total += max(c.Tokens, 1)
	}
	cum, last := 0, req.Arrival
	for j, c := range req.Chunks {
		if p.watchdogNS > 0 && c.At-last > p.watchdogNS {
			out.FailoverBefore = j
			p.toBackup(st, req, out, last+p.watchdogNS, cum, total)
			return
		}
		cum += max(c.Tokens, 1)
		st.merged = append(st.merged, serverUnit{at: c.At, ref: c.At, cum: cum, idx: int32(j)})
		last = c.At
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
	out.FailoverSaved = req.Chunks[len(req.Chunks)-1].At - t
}

// flush applies accept-then-flush: the first chunk at once, then one write
// per window boundary carrying every token produced up to it.
func (p *Path) flush(st *Stream) {
	st.sent = st.sent[:0]
	m := st.merged
	if p.windowNS == 0 {
		for _, u := range m {
			st.sent = append(st.sent, sentUnit{at: u.at, cum: u.cum, events: 1})
		}
		return
	}
	w := p.windowNS
	st.sent = append(st.sent, sentUnit{at: m[0].at, cum: m[0].cum, events: 1})
	tick := m[0].at + w
	pending, cum, events := false, 0, int32(0)
	for _, u := range m[1:] {
		if u.at > tick {
			if pending {
				st.sent = append(st.sent, sentUnit{at: tick, cum: cum, events: events})
				pending, events = false, 0
			}
			tick += ceilDiv(u.at-tick, w) * w
		}
		pending, cum, events = true, u.cum, events+1
	}
	if pending {
		st.sent = append(st.sent, sentUnit{at: tick, cum: cum, events: events})
	}
}

// coalesce merges writes in the proxy or TCP buffer into packets.
func (p *Path) coalesce(st *Stream) {
	st.packets = st.packets[:0]
	s := st.sent
	emit := func(at int64, cum int) { st.packets = append(st.packets, packet{rel: at, cum: cum}) }
	full := func(bytes, toks int) bool {
		return (p.sizeBytes > 0 && bytes >= p.sizeBytes) || (p.sizeTokens > 0 && toks >= p.sizeTokens)
	}
	switch p.mode {
	case ModeBuffer:
		pending, deadline, bytes, toks, cum, prev := false, int64(0), 0, 0, 0, 0
		for _, u := range s {
			if pending && p.bufFlushNS > 0 && u.at >= deadline {
				emit(deadline, cum)
				pending = false
			}
			if !pending {
				pending, deadline, bytes, toks = true, u.at+p.bufFlushNS, 0, 0
			}
			t := u.cum - prev
			prev, cum = u.cum, u.cum
			bytes += int(u.events)*p.eventBytes + t*p.tokenBytes
			toks += t
			if full(bytes, toks) {
				emit(u.at, cum)
				pending = false
			}
		}
		if pending { // the end of the response flushes the proxy
			emit(s[len(s)-1].at, cum)
		}
	case ModeNagle:
		ackAt := int64(math.MinInt64) // when the segment in flight is acknowledged
		pending, bytes, toks, cum, prev := false, 0, 0, 0, 0
		for _, u := range s {
			if pending && ackAt <= u.at {
				emit(ackAt, cum)
				pending, ackAt = false, ackAt+p.ackWaitNS
			}
			if !pending {
				pending, bytes, toks = true, 0, 0
			}
			t := u.cum - prev
			prev, cum = u.cum, u.cum
			bytes += int(u.events)*p.eventBytes + t*p.tokenBytes
			toks += t
			if ackAt <= u.at || full(bytes, toks) {
				emit(u.at, cum)
				pending, ackAt = false, u.at+p.ackWaitNS
			}
		}
		if pending {
			emit(max(s[len(s)-1].at, ackAt), cum)
		}
	default:
		for _, u := range s {
			emit(u.at, u.cum)
		}
	}
}

// transmit carries each packet to the client: latency and jitter, losses
// and retransmission timeouts, connection drops and reconnects, in order
// (a late packet holds back the ones behind it).
func (p *Path) transmit(st *Stream, req *Request, out *Result) {
	prevAt, prevParts := int64(math.MinInt64), [3]int64{}
	upAt := req.Arrival
	nextDrop := int64(math.MaxInt64)
	if p.dropPerNS > 0 {
		nextDrop = req.Arrival + p.dropInterval(&st.conn)
	}
	for i := range st.packets {
		pk := &st.packets[i]
		lat := p.baseNS + p.jitter.sample(&st.lat)
		var lossNS int64
		if p.loss > 0 {
			rto := p.rtoNS
			for a := 0; a < maxAttempts && st.loss.float() < p.loss; a++ {
				out.Losses++
				lossNS += rto
				rto = min(2*rto, rtoMaxNS)
			}
		}
		for {
			send := max(pk.rel, upAt)
			parts := [3]int64{lat, lossNS, send - pk.rel}
			at := send + lossNS + lat
			if prevAt > at {
				// Head-of-line blocking: the wait behind the previous packet
				// goes to the causes that made it later than this one.
				var excess [3]int64
				for c := range excess {
					excess[c] = max(prevParts[c]-parts[c], 0)
				}
				var hol [3]int64
				apportion(prevAt-at, excess[:], hol[:])
				for c := range parts {
					parts[c] += hol[c]
				}
				at = prevAt
			}
			if nextDrop <= at {
				out.Reconnects++
				if p.failOnDrop {
					out.Failed, out.FailedAt = true, nextDrop
					st.packets = st.packets[:i]
					return
				}
				upAt = nextDrop + p.reconnect.sample(&st.conn)
				nextDrop = upAt + p.dropInterval(&st.conn)
				continue
			}
			pk.at, pk.parts = at, parts
			prevAt, prevParts = at, parts
			break
		}
	}
}

// dropInterval draws the time to the next connection drop, ns.
func (p *Path) dropInterval(r *Rand) int64 {
	return int64(min(r.exp()/p.dropPerNS, 1e17))
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
	st.released = st.released[:0]
	pk := st.packets
	if p.cadenceNS == 0 {
		for _, u := range pk {
			st.released = append(st.released, release{at: u.at, cum: u.cum})
		}
		return
	}
	c, d := p.cadenceNS, p.depthNS
	cf, df, hf := float64(c), float64(d), float64(horizonFactor*d)
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
				if j > 1 {
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
			n = rate*cf + (float64(depth)-rate*df)*cf/hf
		} else { // the stream has ended: drain within about one depth
			n = rate*cf + float64(depth)*cf/df
		}
		credit += max(n, 0)
		if k := min(depth, int(credit)); k > 0 {
			rel += k
			credit -= float64(k)
			st.released = append(st.released, release{at: t, cum: rel})
		}
		if rel == arrived {
			credit = min(credit, 1)
		}
		t += c
	}
	out.StartupDelay = st.released[0].at - a0
}

// render makes releases visible at the next frame boundary and merges
// those that share one into a single client chunk.
func (p *Path) render(st *Stream, out *Result) {
	var phase int64
	if p.frameNS > 0 {
		phase = int64(st.frame.float() * float64(p.frameNS))
	}
	prev := 0
	for _, r := range st.released {
		v := r.at
		if p.frameNS > 0 {
			v = phase + ceilDiv(r.at-phase, p.frameNS)*p.frameNS
		}
		tok := r.cum - prev
		prev = r.cum
		if n := len(out.Client); n > 0 && out.Client[n-1].At == v {
			out.Client[n-1].Tokens += tok
			continue
		}
		out.Client = append(out.Client, Chunk{At: v, Tokens: tok})
	}
	out.Tokens = prev
}
