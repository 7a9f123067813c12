package reports

import (
	"slices"

	"github.com/itlsim/itlsim/sim"
)

// This file holds what Summarize needs for results imported from measured
// streams (`itlsim analyze`, package reports/ingest): exact float times,
// failed requests and sources that recorded no gaps. Simulated results take
// the same code paths with their integer nanoseconds.

// Source says where a measured run came from. Simulated runs have none.
type Source struct {
	// File is the path the run was read from.
	File string `json:"file"`
	// Format is the importer that read it: vllm, aiperf, guidellm or itlsim.
	Format string `json:"format"`
	// Model is the served model as the file names it, when it does.
	Model string `json:"model,omitempty"`
	// Notes say what the file does not record and how the importer filled
	// in (for example a reconstructed E2EL, or no gaps at all).
	Notes []string `json:"notes"`
}

// streamTimes is one finished stream's times in float nanoseconds.
type streamTimes struct {
	ttft, e2el, tpot, maxGap float64
}

// timesOf returns stream i's times: the exact measured ones when the result
// carries them, else the simulator's integer nanoseconds.
func timesOf(r *sim.Result, i int) streamTimes {
	st := r.Streams.At(i)
	if r.Measured != nil && i < len(r.Measured.Streams) {
		m := &r.Measured.Streams[i]
		return streamTimes{ttft: m.TTFT, e2el: m.E2EL, tpot: sim.TPOTOf(m.E2EL-m.TTFT, st.OutputTokens), maxGap: m.GapMax}
	}
	return streamTimes{ttft: float64(st.TTFT), e2el: float64(st.E2EL), tpot: st.TPOT(), maxGap: float64(st.GapMax)}
}

// noGaps reports whether the result's source recorded no gaps.
func noGaps(r *sim.Result) bool { return r.Measured != nil && r.Measured.NoGaps }

// exactPooled is the pooled ITL distribution computed from every gap of
// every finished measured stream, in ms, and the sorted gaps: exact, where the simulator's
// histogram is within 0.1 %.
func exactPooled(r *sim.Result, ps []float64) (Dist, []float64) {
	n := 0
	for i := range r.Measured.Streams {
		n += len(r.Measured.Streams[i].Gaps)
	}
	if n == 0 {
		return Dist{}, nil
	}
	gaps := make([]float64, 0, n)
	for i := range r.Streams.Len() {
		if r.Streams.At(i).Status != sim.StatusFinished || i >= len(r.Measured.Streams) {
			continue
		}
		for _, g := range r.Measured.Streams[i].Gaps {
			gaps = append(gaps, ms(g))
		}
	}
	slices.Sort(gaps)
	return distOf(gaps, ps), gaps
}
