package reports

import (
	"fmt"
	"strconv"

	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim"
)

// ReplicaRun is one replica's share of a cluster run (runs[].replicas[]).
type ReplicaRun struct {
	Name   string `json:"name"`
	Pool   string `json:"pool"`
	Model  string `json:"model"`
	GPU    string `json:"gpu"`
	TP     int    `json:"tp"`
	Routed int    `json:"routed"` // requests the router sent it
	// Summary has the run summary's contract for the streams it served.
	Summary Summary `json:"summary"`
	// BusyShare is the share of the run with a step running on it.
	BusyShare float64 `json:"busy_share"`
	// KVUtilizationMean is its time-weighted mean KV-cache utilisation.
	KVUtilizationMean float64 `json:"kv_utilization_mean"`
	// Utilization is its MFU, MBU and busy share (see [Utilization]).
	Utilization *Utilization `json:"utilization,omitempty"`
	// Load is its load over time, for the report's per-replica chart.
	Load []LoadPoint `json:"load"`
}

// LoadPoint is one time-series bucket of a replica's load: time-weighted
// means of running and waiting requests and KV utilisation, and its output
// rate.
type LoadPoint struct {
	TS               float64 `json:"t_s"`
	Running          float64 `json:"running"`
	Waiting          float64 `json:"waiting"`
	KVUtilization    float64 `json:"kv_utilization"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
}

// ClusterRun describes the cluster of a run (runs[].cluster): absent for a
// single replica.
type ClusterRun struct {
	Replicas    int     `json:"replicas"`
	Router      string  `json:"router"`
	StalenessMS float64 `json:"staleness_ms"`
	// Imbalance is the largest replica's output tokens over the mean
	// replica's (with prefill and decode pools, over the decode
	// replicas): 1 is perfectly even.
	Imbalance float64 `json:"imbalance"`
	// Decisions counts the router's choices by reason.
	Decisions map[string]int `json:"decisions"`
	// DecodeRouter and DecodeDecisions are the decode router's, with
	// prefill and decode pools (Router and Decisions are then the
	// prefill router's); KVTransfer describes the KV transfers between them.
	DecodeRouter    string         `json:"decode_router,omitempty"`
	DecodeDecisions map[string]int `json:"decode_decisions,omitempty"`
	KVTransfer      *TransferRun   `json:"kv_transfer,omitempty"`
}

// PoolRun is one pool of a disaggregated cluster (runs[].pools[]).
type PoolRun struct {
	Name     string `json:"name"`
	Role     string `json:"role"` // prefill or decode
	Replicas int    `json:"replicas"`
	Routed   int    `json:"routed"` // requests its router sent it
	// HandedOff counts requests a prefill pool prefilled and put on the
	// KV link; Received the transfers a decode pool took over.
	HandedOff int `json:"handed_off"`
	Received  int `json:"received"`
	// BusyShare is the mean over its replicas of the share of the run with
	// a step running.
	BusyShare float64 `json:"busy_share"`
	// Summary has the run summary's contract for the streams that ended
	// on the pool (a prefill pool's: only the requests it rejected).
	Summary Summary `json:"summary"`
}

// TransferRun describes the KV transfers of a disaggregated run.
type TransferRun struct {
	Link      string  `json:"link"` // the preset
	Gbps      float64 `json:"gbps"`
	LatencyUS float64 `json:"latency_us"`
	Layerwise bool    `json:"layerwise"`
	Transfers int64   `json:"transfers"`
	Bytes     int64   `json:"bytes"`
	// TimeMS is each transfer's handoff, from the prefill's end to the KV
	// cache's landing (link wait, wire time and latency); WaitMS the wait
	// for the link alone.
	TimeMS TransferDist `json:"time_ms"`
	WaitMS TransferDist `json:"link_wait_ms"`
	// LinkBusyShare is the share of the run the link carried bytes.
	LinkBusyShare float64 `json:"link_busy_share"`
}

// TransferDist is a distribution of transfer times in ms.
type TransferDist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// AddPools attaches the pools and KV transfers of a run with prefill and
// decode pools; otherwise (tr nil) it adds nothing, so mixed clusters keep
// their output.
func (r *Run) AddPools(pools []sim.PoolReport, tr *sim.TransferStats, routing sim.Routing) {
	if tr == nil || r.Cluster == nil {
		return
	}
	for _, p := range pools {
		r.Pools = append(r.Pools, PoolRun{
			Name: p.Name, Role: p.Role, Replicas: len(p.Replicas), Routed: p.Routed, HandedOff: p.HandedOff, Received: p.Received,
			BusyShare: finite(p.BusyShare), Summary: Summarize(p.Result, r.Config.Metrics),
		})
	}
	c := r.Cluster
	c.DecodeRouter = routing.DecodePolicy
	c.DecodeDecisions = map[string]int{}
	for i, n := range routing.DecodeReasons {
		if n > 0 {
			c.DecodeDecisions[router.Reason(i).String()] = n
		}
	}
	ms := func(h interface {
		Mean() float64
		Quantile(float64) float64
	}) TransferDist {
		return TransferDist{Mean: finite(h.Mean() / 1e6), P50: finite(h.Quantile(0.5) / 1e6), P99: finite(h.Quantile(0.99) / 1e6)}
	}
	t := &TransferRun{Link: tr.Link.Preset, Gbps: tr.Link.Gbps, LatencyUS: tr.Link.LatencyUS, Layerwise: tr.Link.Layerwise,
		Transfers: tr.Count, Bytes: tr.Bytes, TimeMS: ms(tr.Time), WaitMS: ms(tr.Wait)}
	if d := r.Summary.DurationS; d > 0 {
		t.LinkBusyShare = finite(min(1, float64(tr.BusyNS)/1e9/d))
	}
	c.KVTransfer = t
}

// AddCluster attaches the per-replica results and the cluster's routing to
// a run of more than one replica; a single replica adds nothing.
func (r *Run) AddCluster(reps []sim.ReplicaReport, routing sim.Routing) {
	if len(reps) < 2 {
		return
	}
	var sum, top int64
	streaming := 0
	for _, rep := range reps {
		rr := ReplicaRun{
			Name: rep.Name, Pool: rep.Pool, Model: rep.Setup.Model.Name, GPU: rep.Setup.GPU.Name, TP: rep.Setup.Config.TP,
			Routed: rep.Routed, Summary: Summarize(rep.Result, r.Config.Metrics),
			BusyShare: finite(rep.BusyShare), KVUtilizationMean: finite(rep.KVUtilizationMean),
			Utilization: UtilizationOf(&rep.Server.Work),
		}
		for _, p := range Timeseries(rep.Server) {
			rr.Load = append(rr.Load, LoadPoint{TS: p.TS, Running: p.Running, Waiting: p.Waiting, KVUtilization: p.KVUtilization, OutputTokensPerS: p.OutputTokensPerS})
		}
		r.Replicas = append(r.Replicas, rr)
		if rep.Role == sim.RolePrefill { // it streams nothing: the balance is the decode replicas'
			continue
		}
		sum += rep.Server.OutputTokens
		top = max(top, rep.Server.OutputTokens)
		streaming++
	}
	c := &ClusterRun{Replicas: len(reps), Router: routing.Policy, StalenessMS: routing.StalenessMS, Decisions: map[string]int{}}
	if sum > 0 {
		c.Imbalance = float64(top) / (float64(sum) / float64(streaming))
	}
	for i, n := range routing.Reasons {
		if n > 0 {
			c.Decisions[router.Reason(i).String()] = n
		}
	}
	r.Cluster = c
}

// maxReplicaRows bounds the REPLICAS section of a table.
const maxReplicaRows = 16

// clusterRows is the REPLICAS section: the router and the imbalance, then
// a row per replica (the first maxReplicaRows) with what it was sent, how
// busy it was and the tails its streams saw.
func clusterRows(runs []Run) []row {
	n := 0
	runOf := map[*Summary]*Run{}
	for i := range runs {
		runOf[&runs[i].Summary] = &runs[i]
		n = max(n, len(runs[i].Replicas))
	}
	if n == 0 {
		return nil
	}
	cl := func(f func(*Run) string) func(*Summary) string {
		return func(s *Summary) string {
			r := runOf[s]
			if r == nil || r.Cluster == nil {
				return "1 replica"
			}
			return f(r)
		}
	}
	rows := []row{
		section("REPLICAS (p99s: TTFT, stream ITL)"),
		{"router (snapshot ms)", cl(func(r *Run) string {
			return fmt.Sprintf("%s (%s)", r.Cluster.Router, strconv.FormatFloat(r.Cluster.StalenessMS, 'f', -1, 64))
		})},
		{"imbalance max/mean", cl(func(r *Run) string { return f2(r.Cluster.Imbalance) })},
	}
	rows = append(rows, poolRows(runs, runOf)...)
	for k := range min(n, maxReplicaRows) {
		rows = append(rows, row{fmt.Sprintf("replica %d", k), cl(func(r *Run) string {
			if k >= len(r.Replicas) {
				return "-"
			}
			p := &r.Replicas[k]
			return fmt.Sprintf("%s: %d sent, %s busy, %s, %s", p.Name, p.Routed, pct(p.BusyShare), f1(p.Summary.TTFT.P99), f1(p.Summary.StreamP99ITL.P99))
		})})
	}
	if n > maxReplicaRows {
		rows = append(rows, row{fmt.Sprintf("(%d more: see --json)", n-maxReplicaRows), cl(func(*Run) string { return "" })})
	}
	return rows
}

// poolRows are the rows of disaggregated runs: the decode router, the KV
// transfers and a row per pool; none when no run has prefill and decode
// pools.
func poolRows(runs []Run, runOf map[*Summary]*Run) []row {
	n := 0
	for i := range runs {
		n = max(n, len(runs[i].Pools))
	}
	if n == 0 {
		return nil
	}
	dg := func(f func(*Run) string) func(*Summary) string {
		return func(s *Summary) string {
			r := runOf[s]
			if r == nil || r.Cluster == nil || r.Cluster.KVTransfer == nil {
				return "mixed"
			}
			return f(r)
		}
	}
	rows := []row{
		{"decode router", dg(func(r *Run) string { return r.Cluster.DecodeRouter })},
		{"kv link (Gb/s, µs)", dg(func(r *Run) string {
			t := r.Cluster.KVTransfer
			s := fmt.Sprintf("%s (%s, %s)", t.Link, strconv.FormatFloat(t.Gbps, 'f', -1, 64), strconv.FormatFloat(t.LatencyUS, 'f', -1, 64))
			if t.Layerwise {
				s += " layerwise"
			}
			return s
		})},
		{"kv transfers ms: mean/p99, link busy", dg(func(r *Run) string {
			t := r.Cluster.KVTransfer
			return fmt.Sprintf("%d: %s/%s, %s", t.Transfers, f1(t.TimeMS.Mean), f1(t.TimeMS.P99), pct(t.LinkBusyShare))
		})},
	}
	for k := range min(n, maxReplicaRows) {
		rows = append(rows, row{fmt.Sprintf("pool %d", k), dg(func(r *Run) string {
			if k >= len(r.Pools) {
				return "-"
			}
			p := &r.Pools[k]
			if p.Role == sim.RolePrefill {
				return fmt.Sprintf("%s ×%d prefill: %d sent, %s busy", p.Name, p.Replicas, p.Routed, pct(p.BusyShare))
			}
			return fmt.Sprintf("%s ×%d %s: %d received, %s busy, %s, %s", p.Name, p.Replicas, p.Role, p.Received, pct(p.BusyShare), f1(p.Summary.TTFT.P99), f1(p.Summary.StreamP99ITL.P99))
		})})
	}
	return rows
}
