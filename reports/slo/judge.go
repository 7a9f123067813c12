package slo

import "github.com/itlsim/itlsim/reports"

// Judge attaches the terms' outcomes to every run (JSON runs[].slo,
// runs[].slo_pass, and the tables' SLOs section).
func Judge(runs []reports.Run, terms []Term) {
	if len(terms) == 0 {
		return
	}
	for i := range runs {
		out := Evaluate(terms, &runs[i].Summary)
		pass := Pass(out)
		runs[i].SLO, runs[i].SLOPass = out, &pass
		runs[i].Summary.SLO = out
	}
}
