package html_test

import (
	"bytes"
	"testing"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
)

// derivedHeads are column heads that speak of a population without being
// one of its figures, or not in the Vocabulary's words: goodputs (shares
// of streams by their max gap), counts of gaps, a stream's own gap in a
// stall table, a worst stream's own largest gap, the Pareto front on ITL,
// and the Pareto charts' axis titles their tables reuse as heads.
var derivedHeads = map[string]bool{
	"ITL goodput": true, "gaps": true, "gap ms": true, "max gap ms": true, "pareto (ITL)": true,
	"tok/s per user": true, "tokens/s per user": true, "p99 of per-stream p99 ITL (ms)": true,
}

// Every column head of the report, sweep and capacity pages that names a
// population spells it as the Vocabulary does (reports.ColumnMetric).
func TestVocabularyHeads(t *testing.T) {
	runs := simulated(t)
	cfg := sim.DefaultConfig()
	cfg.Cluster.Replicas = 2
	cfg.Workload.Requests = 40
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl := reports.NewRun("cluster", nil, e.Setup().Config, e.Run())
	cl.AddCluster(e.ReplicaReports(), e.Routing())
	var sw, cp bytes.Buffer
	if err := reporthtml.WriteSweep(&sw, sweepResult("a"), reporthtml.Options{}); err != nil {
		t.Fatal(err)
	}
	capRes := &study.CapacityResult{Answer: "a: 10 req/s.", Capacity: []study.Capacity{{Config: "a", MaxRate: 10}}}
	if err := reporthtml.WriteCapacity(&cp, capRes, reporthtml.Options{}); err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{
		"report": render(t, runs, reporthtml.Options{}), "cluster report": render(t, []reports.Run{cl}, reporthtml.Options{}),
		"sweep": sw.Bytes(), "capacity": cp.Bytes(),
	}
	for name, page := range pages {
		heads, named := 0, map[string]bool{}
		walk(parse(t, page), func(n *htmlNode) {
			if n.Data != "th" || n.Parent == nil || n.Parent.Parent == nil || n.Parent.Parent.Data != "thead" {
				return
			}
			heads++
			h := text(n)
			m, ok := reports.ColumnMetric(h)
			if !ok && reports.SpeaksOfMetric(h) && !derivedHeads[h] {
				t.Errorf("%s: column head %q names a metric that is no Vocabulary row's", name, h)
			}
			if ok {
				named[m.Name] = true
			}
		})
		if heads == 0 {
			t.Errorf("%s: no column heads found", name)
		}
		want := map[string]string{"report": "TTFT", "cluster report": "stream p99 ITL", "capacity": "tok/s/user"}[name]
		if want != "" && !named[want] {
			t.Errorf("%s: no column head names %s as the Vocabulary does (heads naming %v)", name, want, named)
		}
	}
}
