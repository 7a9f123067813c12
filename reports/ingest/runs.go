package ingest

import (
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
)

// Runs summarizes each recording under m as a run of the JSON contract,
// its source (file, format, model, notes) attached; withStreams keeps the
// per-stream rows.
func Runs(recs []Recording, m sim.MetricsConfig, withStreams bool) []reports.Run {
	runs := make([]reports.Run, len(recs))
	for i := range recs {
		rec := &recs[i]
		cfg := sim.Config{Name: rec.Name, Metrics: m}
		run := reports.NewRunOptions(rec.Name, nil, cfg, rec.Result(m), withStreams)
		run.Source = &reports.Source{File: rec.File, Format: string(rec.Format), Model: rec.Model, Notes: append([]string{}, rec.Notes...)}
		runs[i] = run
	}
	return runs
}
