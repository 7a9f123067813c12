package study

import (
	"github.com/itlsim/itlsim/reports"
	qoepkg "github.com/itlsim/itlsim/reports/qoe"
	"github.com/itlsim/itlsim/sim"
)

// RunScored runs e, an engine built and not yet run. With qoe, every
// stream that ends is scored (QoE, fluidity) from its timeline, which then
// goes on to next, and the scores go into the result's summaries; without,
// timelines go to next alone. next may be nil. The result is the clients'
// view (e.ServerResult is the server's); the error is the run's (Err).
func RunScored(e *sim.Engine, qoe bool, next sim.TimelineSink) (*sim.Result, error) {
	var sink *qoepkg.Sink
	switch {
	case qoe:
		c := e.Setup().Config
		sink = qoepkg.NewSink(c.Metrics.QoE, reports.ClassQoEs(c), next)
		e.SetTimelineSink(sink)
	case next != nil:
		e.SetTimelineSink(next)
	}
	res := e.Run()
	if err := e.Err(); err != nil {
		return nil, err
	}
	if sink != nil {
		sink.Apply(res)
	}
	// The scores are in the summaries now: let the sink's go.
	e.SetTimelineSink(nil)
	return res, nil
}

// RunReport is the document's run of e, run to res (RunScored): its
// summary (with streams, withStreams), the server's view when a delivery
// path lies between server and clients, and the replicas, pools and KV
// transfers of a cluster. overrides are the fields the run compares.
func RunReport(e *sim.Engine, name string, overrides map[string]string, res *sim.Result, withStreams bool) reports.Run {
	run := reports.NewRunOptions(name, overrides, e.Setup().Config, res, withStreams)
	if srv := e.ServerResult(); srv != res {
		run.AddServerView(srv)
	}
	run.AddCluster(e.ReplicaReports(), e.Routing())
	run.AddPools(e.PoolReports(), e.Transfers(), e.Routing())
	return run
}
