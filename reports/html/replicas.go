package html

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/itlsim/itlsim/reports"
)

// replicasSection draws, for each cluster run, every replica's running
// batch over time (one line per replica: a router that herds shows as one
// line far above the others), and tabulates what each replica was sent and
// what its streams saw. Runs of one replica have no such section.
func replicasSection(runs []reports.Run, names []string) (section, bool, error) {
	sec := section{ID: "replicas", Title: "Load per replica over time",
		Intro: "Time-weighted mean running requests on each replica per time bucket; the table gives each replica's routed requests, busy share (a step running), MFU and MBU (model FLOPs and bytes moved over the GPUs' peaks; n/a with the linear cost model), mean KV utilisation and tails, and the run's routing imbalance (largest replica's output tokens over the mean's)."}
	t := table{ID: "table-replicas", Caption: "Replicas",
		Head: []string{"run", "replica", "pool", "GPU", "TP", "routed", "busy", "MFU", "MBU", "KV mean", metric(reports.PopTTFT).Head("p99"), metric(reports.PopStreamP99ITL).Head("p99"), "imbalance"}}
	found := false
	for i := range runs {
		r := &runs[i]
		if len(r.Replicas) == 0 || r.Cluster == nil {
			continue
		}
		found = true
		id := fmt.Sprintf("chart-replicas-%d", i)
		line := charts.NewLine()
		line.SetGlobalOptions(append(common(id, 340, "axis"),
			charts.WithXAxisOpts(xValue("simulated time (s)")), charts.WithYAxisOpts(yValue("running requests")))...)
		for k, rep := range r.Replicas {
			var pts []opts.LineData
			for _, p := range rep.Load {
				pts = append(pts, opts.LineData{Value: xy(p.TS, p.Running)})
			}
			line.AddSeries(rep.Name, pts, style(runColor(k), "solid", false))
			imb := ""
			if k == 0 {
				imb = f2(r.Cluster.Imbalance)
			}
			t.add(names[i], rep.Name, rep.Pool, rep.GPU, itoa(rep.TP), itoa(rep.Routed), f1(100*rep.BusyShare)+"%",
				utilShare(rep.Utilization, true), utilShare(rep.Utilization, false),
				f1(100*rep.KVUtilizationMean)+"%", f1(rep.Summary.TTFT.P99), f1(rep.Summary.StreamP99ITL.P99), imb)
		}
		c, err := finish(line, id, fmt.Sprintf("Running per replica (%s router): %s", r.Cluster.Router, names[i]), 340)
		if err != nil {
			return sec, false, err
		}
		sec.Charts = append(sec.Charts, c)
	}
	sec.Tables = []table{t}
	return sec, found, nil
}

// utilShare formats a replica's MFU (mfu) or MBU as a percentage; n/a when
// the cost model counts no work.
func utilShare(u *reports.Utilization, mfu bool) string {
	if u == nil {
		return "n/a"
	}
	v, raw := u.MBU, u.MBUUncapped
	if mfu {
		v, raw = u.MFU, u.MFUUncapped
	}
	if v == nil {
		return "n/a"
	}
	if raw != nil {
		return f1(100*(*v)) + "% (capped; counted " + f1(100*(*raw)) + "%)"
	}
	return f1(100*(*v)) + "%"
}
