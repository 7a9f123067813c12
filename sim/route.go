package sim

import (
	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/workloads/seed"
)

// newRecorder builds the recorder of a replica resolved as s.
func (e *Engine) newRecorder(s *Setup) recorder {
	c := &e.setup.Config
	interval := Time(c.Metrics.TimeseriesIntervalS * 1e9)
	rec := recorder{recording: e.rec, spares: e.spares}
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

// routeGroup is a router over a group of the engine's replicas: one over
// every replica in a plain cluster, one over the prefill replicas and one
// over the decode replicas with P/D pools. Each request it routes asks the
// router (package scheduler/router) for a member, handing it the request
// and the loads as the router sees them: the group's in-flight counts,
// always fresh, and the engines' reports (waiting, running, KV
// utilisation) as of the last snapshot. Snapshots are events every
// staleness period while the group has work; with staleness 0 the router
// reads live state at every request. A one-replica run has no router and
// schedules no snapshot, so it is exactly the plain run.
type routeGroup struct {
	members     []int32       // replica indexes; the router's replica i is members[i]
	router      router.Router // nil with one replica, which takes every request
	policy      string
	state       router.State // the loads the router sees
	engineState bool         // the router reads engine-reported load
	events      bool         // the router reads each member's cached prefix (router.Config.UsesKVEvents)
	staleness   Time         // snapshot period; 0 reads live state
	ticking     bool         // a snapshot event is scheduled
	inflight    []int        // per replica (engine index): routed here and not ended
	routed      []int        // per replica (engine index): requests routed here
	reasons     [router.NumReasons]int
	rq          router.Request
}

// newRouteGroup builds the router rc over members (infos are theirs) of n
// replicas; live reads the engines' state at every request whatever the
// policy reads.
func newRouteGroup(rc router.Config, members []int32, infos []router.Replica, n int, stream seed.Rand, live bool) (routeGroup, error) {
	g := routeGroup{members: members, policy: rc.Policy, events: rc.UsesKVEvents(), inflight: make([]int, n), routed: make([]int, n)}
	var err error
	g.router, err = router.New(rc, infos, stream)
	g.state.Loads = make([]router.Load, len(members))
	switch {
	case live:
		g.engineState = true
	case rc.UsesEngineState():
		g.engineState, g.staleness = true, FromMS(rc.Staleness())
	}
	return g, err
}

// route picks the member for request id of prompt tokens and content c,
// counts it there and returns its replica index; arm reports that this
// took the first snapshot of a busy spell, so the next is due staleness
// from now.
func (g *routeGroup) route(reps []*Replica, id, prompt int, c *kvcache.Content) (m int32, arm bool) {
	if g.router == nil {
		m = g.members[0]
		g.inflight[m]++
		g.routed[m]++
		return m, false
	}
	st := &g.state
	for i, r := range g.members {
		st.Loads[i].InFlight = g.inflight[r]
	}
	if g.engineState && (g.staleness == 0 || !g.ticking) { // live, or the first request after an idle spell
		g.read(reps)
		arm = g.staleness > 0
		g.ticking = arm
	}
	if g.events {
		for i, r := range g.members {
			st.Loads[i].CachedTokens = reps[r].kv.CachedPrefix(c, prompt)
		}
	}
	rq := &g.rq
	rq.ID, rq.PromptTokens = id, prompt
	rq.Prefix, rq.PrefixUnit = c.Units, c.UnitTokens
	rq.Content = c
	d := g.router.Route(rq, st)
	rq.Content = nil
	g.reasons[d.Reason]++
	m = g.members[d.Replica]
	g.inflight[m]++
	g.routed[m]++
	return m, arm
}

// read takes the engines' snapshot.
func (g *routeGroup) read(reps []*Replica) {
	st := &g.state
	for i, m := range g.members {
		l, r := &st.Loads[i], reps[m]
		l.Waiting = r.sched.Waiting()
		l.Running = len(r.sched.Running())
		l.KVUtilization = r.kv.Utilization()
	}
	st.Snapshot++
}

// snapshot is the periodic snapshot event: it refreshes the loads and
// reports whether to re-arm, which it does while requests are due or a
// member has work.
func (g *routeGroup) snapshot(reps []*Replica, due bool) bool {
	g.read(reps)
	active := due
	for _, m := range g.members {
		active = active || reps[m].Active() > 0
	}
	g.ticking = active
	return active
}

// newGroups builds the route groups of the replicas reps (infos are
// theirs): one over every replica, or with P/D pools one over each role,
// whose routers read live loads.
func newGroups(s *Setup, reps []*Replica, infos []router.Replica, runSeed uint64) ([]routeGroup, error) {
	cl := &s.Config.Cluster
	n := len(reps)
	if !cl.Disaggregated() {
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		if n == 1 {
			return []routeGroup{{members: all, inflight: make([]int, 1), routed: make([]int, 1)}}, nil
		}
		g, err := newRouteGroup(cl.Router, all, infos, n, seed.Stream(runSeed, "router"), false)
		return []routeGroup{g}, err
	}
	gs := make([]routeGroup, 2)
	for k, g := range []struct {
		role, name string
		rc         router.Config
	}{{RolePrefill, "router", cl.Router}, {RoleDecode, "decode-router", cl.DecodeRouterConfig()}} {
		var members []int32
		var in []router.Replica
		for i, r := range reps {
			if r.id.role == g.role {
				members, in = append(members, int32(i)), append(in, infos[i])
			}
		}
		var err error
		if gs[k], err = newRouteGroup(g.rc, members, in, n, seed.Stream(runSeed, g.name), true); err != nil {
			return nil, err
		}
	}
	return gs, nil
}

// groupOf is the route group replica i is a member of.
func (e *Engine) groupOf(i int) *routeGroup {
	if len(e.groups) > 1 && e.reps[i].id.role == RoleDecode {
		return &e.groups[1]
	}
	return &e.groups[0]
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
		rr := ReplicaReport{Name: r.id.name, Pool: r.id.pool, Role: r.id.role, Setup: r.setup, Routed: e.groupOf(i).routed[i], Result: r.Result(), Server: r.ServerResult()}
		if l := e.link; l != nil {
			rr.HandedOff, rr.Received = l.handedOff[i], l.received[i]
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
	g := &e.groups[0]
	if g.router == nil {
		return Routing{}
	}
	out := Routing{Policy: g.policy, Reasons: g.reasons}
	if len(e.groups) > 1 { // both routers read live loads (staleness 0)
		out.DecodePolicy, out.DecodeReasons = e.groups[1].policy, e.groups[1].reasons
	} else {
		out.StalenessMS = e.setup.Config.Cluster.Router.Staleness()
	}
	return out
}
