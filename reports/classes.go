package reports

import (
	"fmt"
	"slices"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// ClassSummaries summarizes each traffic class of a simulated run with the
// same definitions as the whole run, each class judged by its own SLO
// limits when it has any (else the run's). They cover requests, latencies,
// per-stream ITL and goodputs; server-side counters (preemptions, stall
// time by cause, steps, swap) are kept for the whole run only and are zero
// here. nil when the run has no classes.
func ClassSummaries(r *sim.Result, cfg sim.Config) map[string]*Summary {
	if len(r.ClassNames) == 0 || r.Measured != nil {
		return nil
	}
	classes, _ := cfg.Workload.ResolveClasses()
	out := make(map[string]*Summary, len(r.ClassNames))
	for k, name := range r.ClassNames {
		sub := &sim.Result{Name: name, Duration: r.Duration, Pooled: r.ClassPooled[k], PerToken: r.ClassPooled[k]}
		for i := range sub.Position {
			sub.Position[i] = r.Position[i] // not used by Summarize; keeps the value well-formed
			sub.PositionPerToken[i] = r.PositionPerToken[i]
		}
		for _, st := range r.Streams {
			if int(st.Class) != k {
				continue
			}
			sub.Streams = append(sub.Streams, st)
			sub.Requests++
			if st.Status == sim.StatusFinished {
				sub.Finished++
				sub.InputTokens += int64(st.InputTokens)
				sub.OutputTokens += int64(st.OutputTokens)
			} else {
				sub.Rejected[st.Reject]++
			}
		}
		m := cfg.Metrics
		if i := slices.IndexFunc(classes, func(c workloads.Class) bool { return c.Name == name }); i >= 0 {
			if slo := classes[i].SLO; slo.TTFTMS > 0 || slo.TPOTMS > 0 || slo.E2ELMS > 0 {
				m.SLO = sim.SLO{TTFTMS: slo.TTFTMS, TPOTMS: slo.TPOTMS, E2ELMS: slo.E2ELMS}
			}
		}
		s := Summarize(sub, m)
		s.SLOLimits = fmt.Sprintf("ttft_ms=%g tpot_ms=%g e2el_ms=%g", m.SLO.TTFTMS, m.SLO.TPOTMS, m.SLO.E2ELMS)
		out[name] = &s
	}
	return out
}
