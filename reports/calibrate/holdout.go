package calibrate

import (
	"fmt"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// HoldOut is one measured run checked out of sample: the fields fitted on
// every other run (FittedOn), then this run simulated with them.
type HoldOut struct {
	Run      string
	FittedOn []string
	Values   map[string]float64 // the fitted fields, by path
	LossFit  float64            // the fit's loss on the runs it saw
	// FrontEnd is which front-end fields the fit took (TuneOptions.FrontEnd).
	FrontEnd   *Identification
	Comparison Comparison // the held-out run, measured against simulated
}

// LeaveOneOut fits the fields of o on all runs but one and validates on the
// one left out, for each run in turn: every figure it returns comes from a
// fit that never saw the run it is checked on. The held-out run is
// simulated within the whole list, so that with o.Validate.WarmCache its
// cache starts as it did when the runs were made back to back.
func LeaveOneOut(base sim.Config, recs []ingest.Recording, o TuneOptions) ([]HoldOut, error) {
	if len(recs) < 2 {
		return nil, fmt.Errorf("leave-one-out needs at least 2 measured runs, got %d", len(recs))
	}
	out := make([]HoldOut, 0, len(recs))
	for i := range recs {
		others := make([]ingest.Recording, 0, len(recs)-1)
		others = append(others, recs[:i]...)
		others = append(others, recs[i+1:]...)
		oi := o
		if o.Progress != nil {
			// One fit per run, each of up to Evals simulations.
			oi.Progress = func(done, total int) { o.Progress(i*total+done, len(recs)*total) }
		}
		res, err := Tune(base, others, oi)
		if err != nil {
			return nil, fmt.Errorf("fit without %s: %w", recs[i].Name, err)
		}
		setup, err := res.Config.Resolve()
		if err != nil {
			return nil, err
		}
		cmps, err := Validate(setup, recs, o.Validate)
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", recs[i].Name, err)
		}
		h := HoldOut{Run: recs[i].Name, Values: res.Values, LossFit: res.LossAfter, Comparison: cmps[i], FrontEnd: res.FrontEnd}
		for j := range others {
			h.FittedOn = append(h.FittedOn, others[j].Name)
		}
		out = append(out, h)
	}
	return out, nil
}

// HoldOutMetrics are the figures the out-of-sample table shows: medians and
// tails of TTFT, TPOT, ITL and per-stream p99 ITL.
var HoldOutMetrics = []string{"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "itl_p50_ms", "itl_p99_ms", "stream_p99_itl_p50_ms"}
