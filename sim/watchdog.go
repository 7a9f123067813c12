package sim

import "fmt"

// The failover watchdog on the server side. With a delivery path whose
// failover watchdog is on (and keep_primary off), a stream that has shown
// nothing for longer than the watchdog — since its arrival, or since its
// last chunk — is aborted on the primary, as vLLM aborts a request whose
// client went away: its KV blocks and batch slot go to the other streams,
// and the delivery path has the backup produce the rest from the moment
// the watchdog fired (delivery.Request.CancelledAt).
//
// The abort takes effect at a step boundary, when the engine can change its
// scheduler's state: a stream in the step that just ended is checked before
// its tokens are emitted (a step longer than the watchdog, such as a
// hiccup, strands every stream in it), the others through a heap of
// deadlines looked at before each step. The heap holds at most one entry
// per request, re-armed lazily when it comes due: a stream that keeps
// emitting costs one entry per watchdog period, not one per token.

// watchdog is a replica's failover watchdog: off when ns is 0.
type watchdog struct {
	ns  Time                             // how long a stream may show nothing
	due minHeap[watchEntry, *watchEntry] // the deadlines to look at, earliest first
}

// watchEntry is the watchdog's next look at one request.
type watchEntry struct {
	at   Time // the request's deadline when the entry was armed
	id   int  // the request's ID: a slot since reused by another request is a stale entry
	slot int32
}

// before orders entries by time, then ID (for determinism).
func (a *watchEntry) before(b *watchEntry) bool {
	return a.at < b.at || (a.at == b.at && a.id < b.id)
}

// deadline is when the watchdog gives up on q if it shows nothing more.
func (r *Replica) deadline(q *request) Time {
	if q.chunks == 0 {
		return q.arrival + r.watch.ns
	}
	return q.last + r.watch.ns
}

// watch arms the watchdog for a request that was just queued.
func (r *Replica) watchRequest(q *request) {
	r.watch.due.push(watchEntry{at: r.deadline(q), id: q.seq.ID, slot: int32(q.seq.Slot)})
}

// checkWatchdog aborts, before a step, every request whose deadline has
// passed, and re-arms the entries of those that emitted since.
func (r *Replica) checkWatchdog() {
	for r.watch.due.Len() > 0 && r.watch.due.peek().at < r.now {
		w := r.watch.due.pop()
		q := r.slots[w.slot]
		if !q.live || q.seq.ID != w.id {
			continue // ended, and its slot perhaps reused
		}
		if d := r.deadline(q); d < r.now {
			r.cancel(q, d)
		} else {
			r.watch.due.push(watchEntry{at: d, id: w.id, slot: w.slot})
		}
	}
}

// cancel aborts q on the replica: the watchdog fired at fire, and the
// stream's open gap (from its last chunk, or its arrival, to now) is the
// one the backup takes over.
func (r *Replica) cancel(q *request, fire Time) {
	r.sched.Abort(&q.seq)
	if q.paused {
		q.acc[q.pauseCause] += r.now - q.pauseStart
		q.paused = false
	}
	if q.chunks > 0 {
		// The silence the watchdog gave up on ends the stream in the server
		// view (see end), as a stall when it is one; the client splits the
		// server's part of its failover gap by its causes.
		gap := r.now - q.last
		if t := q.acc.sum(); t != gap {
			panic(fmt.Sprintf("sim: request %d: cancelled after a %d ns silence whose parts sum to %d ns (%v)", q.seq.ID, gap, t, q.acc))
		}
		if gap > r.rec.stall {
			r.rec.noteStall(q, gap, q.chunks, &q.acc)
		}
		q.noteGapCauses(gap, &q.acc)
	}
	r.rec.res.Cancelled++
	r.end(q, fire)
}
