package sim

import (
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/workloads"
)

// Routing in a cluster. Each arrival asks the router (package
// scheduler/router) for a replica, handing it the request and the loads
// as the router sees them: its own in-flight counts, always fresh, and the
// engines' reports (waiting, running, KV utilisation) as of the last
// snapshot. Snapshots are events every staleness period while the cluster
// has work; with staleness 0 the router reads live state at every arrival.
// A one-replica run routes nothing and schedules no snapshot, so it is
// exactly the plain run.

// newRecorder builds the recorder of a replica resolved as s.
func (e *Engine) newRecorder(s *Setup) recorder {
	c := &e.setup.Config
	interval := Time(c.Metrics.TimeseriesIntervalS * 1e9)
	rec := recorder{recording: e.rec}
	if p := e.shared; p != nil {
		rec.res = newResultNoPositions(interval)
		rec.res.Series.pool = e.spares
		rec.pos, rec.posTok = &p.gap, &p.tok
		if p.itl != nil {
			rec.itl = p.itl
			rec.res.Series.noITL = true
		}
	} else {
		rec.res = newResultFrom(interval, e.spares)
		rec.pos, rec.posTok = &rec.res.Position, &rec.res.PositionPerToken
	}
	if s.Delivery != nil {
		rec.client = newClientView(s.Delivery, interval, e.spares)
		rec.classDelivery = s.ClassDelivery
	}
	res := rec.res
	res.Name = c.Name
	res.WorstK = c.Metrics.WorstStreams
	if sc := s.Config.SpecDecode; sc.Enabled() {
		res.SpecMethod, res.SpecK = sc.Method, sc.K
	}
	res.KVBlocks = s.Blocks
	return rec
}

// route picks the replica for the pending request.
func (e *Engine) route(p *workloads.Request) int {
	st := &e.state
	for i := range e.reps {
		st.Loads[i].InFlight = e.inflight[i]
	}
	if e.engineState {
		switch {
		case e.staleness == 0:
			e.readLoads()
		case !e.ticking: // the first arrival, or the first after an idle spell
			e.readLoads()
			e.ticking = true
			e.push(e.now.Add(e.staleness), evSnapshot, -1)
		}
	}
	rq := &e.routeReq
	rq.ID, rq.PromptTokens = p.ID, p.InputTokens
	rq.Prefix, rq.PrefixUnit = p.PrefixBlocks, p.PrefixBlockTokens
	rq.Content = &e.content
	if e.kvEvents {
		for i, r := range e.reps {
			st.Loads[i].CachedTokens = r.kv.CachedPrefix(&e.content, p.InputTokens)
		}
	}
	d := e.router.Route(rq, st)
	rq.Content = nil
	e.reasons[d.Reason]++
	e.inflight[d.Replica]++
	e.routed[d.Replica]++
	return d.Replica
}

// readLoads takes the engines' snapshot.
func (e *Engine) readLoads() {
	st := &e.state
	for i, r := range e.reps {
		l := &st.Loads[i]
		l.Waiting = r.sched.Waiting()
		l.Running = len(r.sched.Running())
		l.KVUtilization = r.kv.Utilization()
	}
	st.Snapshot++
}

// snapshot is the periodic snapshot event: it refreshes the loads and
// re-arms while requests are due or active.
func (e *Engine) snapshot() {
	e.readLoads()
	active := e.arrivalPending
	for _, r := range e.reps {
		active = active || r.Active() > 0
	}
	if active {
		e.push(e.now.Add(e.staleness), evSnapshot, -1)
	} else {
		e.ticking = false
	}
}

// ReplicaReport is one replica's share of a run.
type ReplicaReport struct {
	Name   string
	Pool   string // "" without pools
	Role   string // "" (mixed), RolePrefill or RoleDecode
	Setup  *Setup // the replica's resolved configuration
	Routed int    // requests the router sent it (a decode replica: the decode router)
	// HandedOff counts the requests a prefill replica put on the KV link;
	// Received the transfers a decode replica took over.
	HandedOff, Received int
	// Result is what its streams' clients saw; Server the server's view
	// (the same without a delivery path).
	Result, Server *Result
	// BusyShare is the share of the run's duration with a step running.
	BusyShare float64
	// KVUtilizationMean is the time-weighted mean share of KV blocks in use.
	KVUtilizationMean float64
}

// ReplicaReports describes every replica, in index order (after Run).
func (e *Engine) ReplicaReports() []ReplicaReport {
	out := make([]ReplicaReport, len(e.reps))
	d := float64(e.workAt)
	for i, r := range e.reps {
		var busy, kv float64
		for _, b := range r.rec.res.Series.Buckets {
			busy += float64(b.BusyNS)
			kv += b.KVUsedNS
		}
		rr := ReplicaReport{Name: r.name, Pool: r.pool, Role: r.role, Setup: r.setup, Routed: e.routed[i], Result: r.Result(), Server: r.ServerResult()}
		if e.disagg != nil {
			rr.HandedOff, rr.Received = e.disagg.handedOff[i], e.disagg.received[i]
		}
		if d > 0 {
			rr.BusyShare, rr.KVUtilizationMean = min(1, busy/d), kv/d
		}
		out[i] = rr
	}
	return out
}

// Routing is what the router did over a run.
type Routing struct {
	Policy      string
	StalenessMS float64 // the snapshot period it ran with
	Reasons     [router.NumReasons]int
	// DecodePolicy and DecodeReasons are the decode router's, with
	// prefill and decode pools (Policy and Reasons are then the prefill
	// router's); zero otherwise.
	DecodePolicy  string
	DecodeReasons [router.NumReasons]int
}

// Routing reports the router's policy and its decisions by reason; zero
// for a one-replica run.
func (e *Engine) Routing() Routing {
	if d := e.disagg; d != nil {
		// Both routers read live loads (staleness 0).
		return Routing{Policy: d.prefill.policy, Reasons: d.prefill.reasons, DecodePolicy: d.decode.policy, DecodeReasons: d.decode.reasons}
	}
	if e.router == nil {
		return Routing{}
	}
	rc := e.setup.Config.Cluster.Router
	return Routing{Policy: rc.Policy, StalenessMS: rc.Staleness(), Reasons: e.reasons}
}
