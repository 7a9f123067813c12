package qoe

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// The sink scores each timeline under the run's expectation and its
// class's, and Apply writes each stream's scores (its class's) into its
// summary: dense ids on both sides of a storage chunk, ids far beyond them
// and negative ones; streams it never saw and rejected ones stay unscored.
func TestSinkAppliesEachStreamsScores(t *testing.T) {
	run := sim.QoE{ExpectedTTFTMS: 1000, TokensPerS: 5}
	strict := sim.QoE{ExpectedTTFTMS: 50, TokensPerS: 100}
	s := NewSink(run, []sim.QoE{{}, strict}, nil)
	ids := []int{0, 1, chunkLen - 1, chunkLen, 3*chunkLen + 7, maxSlot + 5, -3}
	var res sim.Result
	want := map[int]Scores{}
	for k, id := range ids {
		tl := &sim.Timeline{ID: id, Arrival: sim.Time(k) * sim.Second}
		at := tl.Arrival + sim.Time(100+37*k)*sim.Millisecond
		for c := range 20 {
			tl.Chunks = append(tl.Chunks, sim.Chunk{At: at, Tokens: 1 + c%2})
			at += sim.Time(30+k*11+c%5*20) * sim.Millisecond
		}
		s.Stream(tl)
		class, exp := int16(k%2), run
		if class == 1 {
			exp = strict
		}
		var times []float64
		var tokens []int
		for _, c := range tl.Chunks {
			times = append(times, float64(c.At-tl.Arrival))
			tokens = append(tokens, c.Tokens)
		}
		sc, ok := Score(Expectation{TTFT: exp.ExpectedTTFTMS * 1e6, TokensPerS: exp.TokensPerS}, times, tokens)
		if !ok {
			t.Fatalf("stream %d not scorable", id)
		}
		want[id] = sc
		res.Streams.Append(sim.StreamSummary{ID: id, Class: class})
	}
	res.Streams.Append(sim.StreamSummary{ID: 99, Class: -1}, sim.StreamSummary{ID: 1, Status: sim.StatusRejected})
	s.Apply(&res)
	for _, st := range res.Streams.All() {
		w, scored := want[st.ID]
		if st.Status == sim.StatusRejected || !scored {
			if st.Scored {
				t.Errorf("stream %d (%v) scored", st.ID, st.Status)
			}
			continue
		}
		if !st.Scored || st.QoE != float32(w.QoE) || st.Fluidity != float32(w.Fluidity) || st.FluidRate != float32(w.FluidRate) {
			t.Errorf("stream %d: scored %v %g %g %g, want %g %g %g", st.ID, st.Scored, st.QoE, st.Fluidity, st.FluidRate, w.QoE, w.Fluidity, w.FluidRate)
		}
	}
	if a, b := res.Streams.At(0), res.Streams.At(1); a.QoE == b.QoE && a.Fluidity == b.Fluidity {
		t.Error("the strict class's stream scored like the run's")
	}
}
