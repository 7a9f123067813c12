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
	// replica's: 1 is perfectly even.
	Imbalance float64 `json:"imbalance"`
	// Decisions counts the router's choices by reason.
	Decisions map[string]int `json:"decisions"`
}

// AddCluster attaches the per-replica results and the cluster's routing to
// a run of more than one replica; a single replica adds nothing.
func (r *Run) AddCluster(reps []sim.ReplicaReport, routing sim.Routing) {
	if len(reps) < 2 {
		return
	}
	var sum, top int64
	for _, rep := range reps {
		rr := ReplicaRun{
			Name: rep.Name, Pool: rep.Pool, Model: rep.Setup.Model.Name, GPU: rep.Setup.GPU.Name, TP: rep.Setup.Config.TP,
			Routed: rep.Routed, Summary: Summarize(rep.Result, r.Config.Metrics),
			BusyShare: finite(rep.BusyShare), KVUtilizationMean: finite(rep.KVUtilizationMean),
		}
		for _, p := range Timeseries(rep.Server) {
			rr.Load = append(rr.Load, LoadPoint{TS: p.TS, Running: p.Running, Waiting: p.Waiting, KVUtilization: p.KVUtilization, OutputTokensPerS: p.OutputTokensPerS})
		}
		r.Replicas = append(r.Replicas, rr)
		sum += rep.Server.OutputTokens
		top = max(top, rep.Server.OutputTokens)
	}
	c := &ClusterRun{Replicas: len(reps), Router: routing.Policy, StalenessMS: routing.StalenessMS, Decisions: map[string]int{}}
	if sum > 0 {
		c.Imbalance = float64(top) / (float64(sum) / float64(len(reps)))
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
