package sim

import (
	"fmt"
	"slices"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim/kvlink"
	"github.com/itlsim/itlsim/sim/quantile"
)

// Disaggregated prefill and decode (DistServe, Splitwise, llm-d P/D,
// vLLM's disaggregated prefilling). A cluster whose pools have the roles
// prefill and decode routes each arrival over the prefill replicas (the
// cluster router); the prefill replica computes the prompt and samples the
// first token; the request then leaves it (its blocks are freed) and its
// KV cache — the prompt's tokens, at the model's bytes per token — crosses
// the cluster's KV link to a decode replica chosen by the decode router.
//
// The convention is vLLM's disaggregated prefill: the prefill instance
// produces the first token, and the client sees it when the decode side
// streams it, which is when the KV cache has landed there. TTFT therefore
// includes the transfer (and any wait for the link). The decode replica
// queues the request with its prompt already computed (Seq.Computed =
// prompt, one token generated), so its first step there is a one-token
// decode; the blocks are allocated when its scheduler starts it, and a
// decode replica without room keeps it waiting. The first gap (token 1 to
// token 2) charges that wait, from the landing until the step that starts
// it, to kv-transfer: the handoff is not complete until the KV is placed.
//
// The link is one FIFO pipe shared by every transfer of the cluster: a
// transfer occupies it for bytes / bandwidth, starting when it is free,
// and lands latency later. With layerwise, the transfer streams layer by
// layer during the step that completes the prefill: it may occupy the link
// from that step's start, and lands no sooner than a layer's share of it
// after the prefill ends. Transfers land in the order they started, so the
// engine keeps them in a FIFO queue and one event class (evTransferEnd)
// pops its head.

// handoff is a request a prefill replica has computed the prompt of and
// sampled the first token for, as it leaves the replica (its blocks are
// freed): what the decode side needs to take it over, and what the link
// needs to time its KV cache.
type handoff struct {
	seq         scheduler.Seq // as admitted, with its full output length
	arrival     Time
	seed        uint64
	class       int16
	preemptions int
	bytes       int64 // its KV cache: the prompt's tokens at the replica's KV bytes per token
	stepAt      Time  // the start of the step that completed its prefill
}

// transfer is one request's KV cache on the link.
type transfer struct {
	handoff
	to         int32 // the decode replica
	prefillEnd Time
	start      Time // first byte on the link
	land       Time
}

// TransferStats describes the KV transfers of a disaggregated run.
type TransferStats struct {
	Link  kvlink.Config // resolved
	Count int64
	Bytes int64
	// Time is the handoff time of each transfer, from the prefill's end to
	// the landing (link wait, bytes on the wire and latency); Wait the link
	// wait alone (from the prefill's end, or with layerwise the last prefill
	// step's start, to the first byte); both in ns.
	Time, Wait *quantile.Histogram
	// BusyNS is the time the link carried bytes.
	BusyNS Time
	// Violations counts transfers that started before their prefill ended
	// (with layerwise: before the prefill's last step started) or landed
	// before it ended; the engine panics on one, so it stays 0.
	Violations int
}

// kvLink is the link between the prefill and decode pools: its transfers
// in landing order and what it carried.
type kvLink struct {
	link      kvlink.Config
	bitNS     float64 // ns per byte on the link
	latency   Time
	freeAt    Time // the link is free from then
	queue     []transfer
	head      int // queue[head:] are on the link, in landing order
	stats     TransferStats
	handedOff []int // per replica: requests a prefill replica handed to the link
	received  []int // per replica: transfers a decode replica took over
}

// newKVLink builds the link lc of a cluster of n replicas.
func newKVLink(lc kvlink.Config, n int) *kvLink {
	d := &kvLink{link: lc.Resolved(), handedOff: make([]int, n), received: make([]int, n)}
	d.bitNS = 8 / d.link.Gbps
	d.latency = Time(d.link.LatencyUS*1e3 + 0.5)
	d.stats.Link = d.link
	d.stats.Time, d.stats.Wait = quantile.NewHistogram(pooledBits), quantile.NewHistogram(pooledBits)
	return d
}

// handOff hands request q, whose prompt the prefill replica has computed
// and whose first token it has sampled, to the KV link (its outcome): the
// replica is done with it, and the engine routes and sends it.
func (r *Replica) handOff(q *request) {
	h := handoff{seq: q.seq, arrival: q.arrival, seed: q.seed, class: q.class, preemptions: q.preemptions,
		bytes: int64(q.seq.Prompt) * r.setup.Model.KVBytesPerToken(), stepAt: r.step.at}
	h.seq.Output, h.seq.State, h.seq.KV, h.seq.Reserved, h.seq.Sched, h.seq.Spec = q.output, scheduler.Waiting, kvcache.Alloc{}, 0, 0, 0
	r.out.handoffs = append(r.out.handoffs, h)
}

// send puts the KV cache of a request prefill replica r handed off (h) on
// the link to the decode replica the decode router picks.
func (e *Engine) send(r *Replica, h *handoff) {
	e.groupOf(int(r.id.index)).inflight[r.id.index]--
	t := e.link.put(r.id.index)
	t.handoff = *h
	t.to, _ = e.groups[1].route(e.reps, t.seq.ID, t.seq.Prompt, &t.seq.Content)
	e.link.send(t, e.now, r.setup.Model.Layers)
	e.push(t.land, evTransferEnd, t.to)
}

// put appends a transfer from replica from to the queue, to be filled in.
func (l *kvLink) put(from int32) *transfer {
	l.handedOff[from]++
	l.queue = slices.Grow(l.queue, 1)
	l.queue = l.queue[:len(l.queue)+1]
	return &l.queue[len(l.queue)-1]
}

// send times transfer t, whose prefill ends now, on a model of layers
// layers, and records it.
func (l *kvLink) send(t *transfer, now Time, layers int) {
	t.prefillEnd = now
	ready := now
	wire := Time(float64(t.bytes)*l.bitNS + 0.5)
	if l.link.Layerwise {
		ready = t.stepAt
	}
	t.start = max(ready, l.freeAt)
	l.freeAt = t.start + wire
	t.land = l.freeAt + l.latency
	if l.link.Layerwise {
		t.land = max(t.land, now+Time(float64(wire)/float64(max(1, layers))+0.5)+l.latency)
	}
	if t.start < ready || t.land < t.prefillEnd {
		l.stats.Violations++
		panic(fmt.Sprintf("sim: request %d: transfer at %d (landing %d) before its prefill ended at %d", t.seq.ID, t.start, t.land, t.prefillEnd))
	}
	l.stats.Count++
	l.stats.Bytes += t.bytes
	l.stats.BusyNS += wire
	l.stats.Time.Record(int64(t.land - t.prefillEnd))
	l.stats.Wait.Record(int64(t.start - ready))
}

// next takes the transfer landing now off the link; what it points to
// holds until the next put.
func (l *kvLink) next() *transfer {
	t := &l.queue[l.head]
	l.head++
	l.received[t.to]++
	if l.head == len(l.queue) {
		l.queue, l.head = l.queue[:0], 0
	}
	return t
}

// land is a transfer's landing: the decode replica takes the request over.
func (e *Engine) land() {
	t := e.link.next()
	r := e.reps[t.to]
	q := r.alloc()
	slot, kv := q.seq.Slot, q.seq.KV.Recycle()
	q.seq = t.seq
	q.seq.Slot, q.seq.KV = slot, kv
	q.arrival, q.seed, q.class, q.preemptions = t.arrival, t.seed, t.class, t.preemptions
	q.output = t.seq.Output
	e.apply(r, r.takeOver(e.now, q))
}

// takeOver queues a request whose prompt another replica computed and
// whose KV cache has just landed and streams its first token; the outcome
// says whether the replica must start a step now.
func (r *Replica) takeOver(now Time, q *request) *outcome {
	o := r.begin(now)
	q.live = true
	q.seq.Generated, q.seq.Computed = 1, q.seq.Prompt
	if q.seq.Output <= 1 { // nothing left to decode: the first token ends it
		r.rec.chunk(now, q, 1, nil)
		r.rec.res.Finished++
		r.end(q, 0)
		return o
	}
	r.startSpec(q)
	if dec := r.sched.Arrive(int64(now), &q.seq); dec.Verdict == scheduler.Reject {
		r.reject(q, dec.Reason)
		return o
	}
	r.emit(q, 1, nil)
	q.paused, q.pauseStart, q.pauseCause = true, now, CauseKVTransfer
	o.start = !r.busy
	r.busy = true
	return o
}

// Transfers reports the KV transfers of a disaggregated run; nil otherwise.
func (e *Engine) Transfers() *TransferStats {
	if e.link == nil {
		return nil
	}
	return &e.link.stats
}

// PoolReport is one pool's share of a run.
type PoolReport struct {
	Name     string
	Role     string // RoleMixed, RolePrefill or RoleDecode
	Replicas []int  // indexes into ReplicaReports
	Routed   int    // requests its router sent it
	// HandedOff counts the requests a prefill pool prefilled and put on
	// the link; Received the transfers a decode pool took over.
	HandedOff, Received int
	// Result merges its replicas' results (the client's view); Server the
	// server's. A prefill pool's Requests are those routed to it; a decode
	// pool's those it received.
	Result, Server *Result
	// BusyShare is the mean over its replicas of the share of the run with
	// a step running.
	BusyShare float64
}

// PoolReports describes every pool of a cluster of pools, in order (after
// Run); nil without pools.
func (e *Engine) PoolReports() []PoolReport {
	pools := e.setup.Pools
	if len(e.setup.Config.Cluster.Pools) == 0 {
		return nil
	}
	reps := e.ReplicaReports()
	var out []PoolReport
	i := 0
	for _, p := range pools {
		pr := PoolReport{Name: p.Name, Role: p.Role}
		if pr.Role == "" {
			pr.Role = RoleMixed
		}
		var views, servers []*Result
		for range p.Replicas {
			rr := &reps[i]
			pr.Replicas = append(pr.Replicas, i)
			pr.Routed += rr.Routed
			pr.BusyShare += rr.BusyShare / float64(p.Replicas)
			views, servers = append(views, rr.Result), append(servers, rr.Server)
			pr.HandedOff += rr.HandedOff
			pr.Received += rr.Received
			i++
		}
		pr.Result, pr.Server = mergeResults(views), mergeResults(servers)
		if pr.Role == RoleDecode { // its requests arrived over the link, not from the workload
			pr.Result.Requests, pr.Server.Requests = pr.Received, pr.Received
		}
		out = append(out, pr)
	}
	return out
}

// mergeResults merges several replicas' results into a new one.
func mergeResults(rs []*Result) *Result {
	m := newResult(rs[0].Series.Interval)
	m.Name, m.Delivery.On = rs[0].Name, rs[0].Delivery.On
	for _, r := range rs {
		m.Merge(r)
	}
	return m
}
