package reports

import (
	"fmt"
	"slices"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// ClassSLOs returns the SLO limits of each of the result's classes (by
// index into r.ClassNames) from the configuration's resolved classes; a
// class without limits of its own gets a zero entry (judged by the run's).
func ClassSLOs(r *sim.Result, cfg sim.Config) []sim.SLO {
	if len(r.ClassNames) == 0 {
		return nil
	}
	classes, _ := cfg.Workload.ResolveClasses()
	out := make([]sim.SLO, len(r.ClassNames))
	for k, name := range r.ClassNames {
		if i := slices.IndexFunc(classes, func(c workloads.Class) bool { return c.Name == name }); i >= 0 {
			c := classes[i].SLO
			out[k] = sim.SLO{TTFTMS: c.TTFTMS, TPOTMS: c.TPOTMS, E2ELMS: c.E2ELMS, StreamP99ITLMS: c.StreamP99ITLMS, StreamMaxGapMS: c.StreamMaxGapMS}
		}
	}
	return out
}

// ClassQoEs returns each configured class's QoE expectation in the order
// of the resolved classes (the engine's class indexes for configured
// classes); a zero entry takes the run's.
func ClassQoEs(cfg sim.Config) []sim.QoE {
	classes, _ := cfg.Workload.ResolveClasses()
	out := make([]sim.QoE, len(classes))
	for i, c := range classes {
		if c.QoE != (workloads.ClassQoE{}) {
			q := cfg.Metrics.QoE
			if q == (sim.QoE{}) {
				q = sim.DefaultQoE()
			}
			if c.QoE.ExpectedTTFTMS > 0 {
				q.ExpectedTTFTMS = c.QoE.ExpectedTTFTMS
			}
			if c.QoE.TokensPerS > 0 {
				q.TokensPerS = c.QoE.TokensPerS
			}
			out[i] = q
		}
	}
	return out
}

// ClassSummaries summarizes each traffic class of a simulated run with the
// same definitions as the whole run, each class judged by its own SLO
// limits when it has any (else the run's). They cover requests, latencies,
// per-stream ITL, QoE and goodputs; server-side counters (preemptions,
// stall time by cause, steps, swap) are kept for the whole run only and
// are zero here. nil when the run has no classes.
func ClassSummaries(r *sim.Result, cfg sim.Config) map[string]*Summary {
	return classSummaries(r, cfg, false)
}

// classSummaries is ClassSummaries; fromResult as Options.FromResult.
func classSummaries(r *sim.Result, cfg sim.Config, fromResult bool) map[string]*Summary {
	if len(r.ClassNames) == 0 || r.Measured != nil {
		return nil
	}
	limits := ClassSLOs(r, cfg)
	out := make(map[string]*Summary, len(r.ClassNames))
	for k, name := range r.ClassNames {
		sub := &sim.Result{Name: name, Duration: r.Duration, Pooled: r.ClassPooled[k], PerToken: r.ClassPooled[k], Series: r.Series}
		for i := range sub.Position {
			sub.Position[i] = r.Position[i] // not used by Summarize; keeps the value well-formed
			sub.PositionPerToken[i] = r.PositionPerToken[i]
		}
		// sub holds the class's counters; its streams are r's of the class.
		set := streamSet{r: r, class: k}
		set.each(func(_ int, st *sim.StreamSummary) {
			sub.Requests++
			if st.Status == sim.StatusFinished {
				sub.Finished++
				sub.InputTokens += int64(st.InputTokens)
				sub.OutputTokens += int64(st.OutputTokens)
			} else {
				sub.Rejected[st.Reject]++
			}
		})
		m := cfg.Metrics
		if !limits[k].IsZero() {
			m.SLO = limits[k]
		}
		s := summarize(sub, set, m, Options{FromResult: fromResult})
		s.SLOLimits = fmt.Sprintf("ttft_ms=%g tpot_ms=%g e2el_ms=%g", m.SLO.TTFTMS, m.SLO.TPOTMS, m.SLO.E2ELMS)
		if m.SLO.StreamP99ITLMS > 0 || m.SLO.StreamMaxGapMS > 0 {
			s.SLOLimits += fmt.Sprintf(" stream_p99_itl_ms=%g stream_max_gap_ms=%g", m.SLO.StreamP99ITLMS, m.SLO.StreamMaxGapMS)
		}
		out[name] = &s
	}
	return out
}
