package qoe

import "github.com/itlsim/itlsim/sim"

// Sink scores every finished stream of a simulation as the engine hands
// over its timeline (it implements sim.TimelineSink) and, after the run,
// writes the scores into the result's stream summaries (Apply). A stream
// is scored under each distinct expectation of the run (the run's and its
// classes'), since its class is known only from the result; Apply picks
// its class's. It keeps three numbers per stream and expectation, and
// allocates nothing per stream once its buffers have grown.
type Sink struct {
	exps    []Expectation
	byClass []int // class index → index into exps; -1: the run's (0)
	next    sim.TimelineSink
	at      []float64
	tokens  []int
	ids     map[int]int // stream id → first score's index in scores
	scores  []Scores
}

// NewSink scores against run (streams without a class) and classes[i]
// (streams of class i; a zero expectation takes the run's). next, if not
// nil, receives every timeline after scoring.
func NewSink(run sim.QoE, classes []sim.QoE, next sim.TimelineSink) *Sink {
	s := &Sink{next: next, ids: map[int]int{}}
	index := func(q sim.QoE) int {
		if q == (sim.QoE{}) {
			q = run
		}
		if q == (sim.QoE{}) {
			q = sim.DefaultQoE()
		}
		e := Expectation{TTFT: q.ExpectedTTFTMS * 1e6, TokensPerS: q.TokensPerS}
		for i, x := range s.exps {
			if x == e {
				return i
			}
		}
		s.exps = append(s.exps, e)
		return len(s.exps) - 1
	}
	index(run)
	for _, c := range classes {
		s.byClass = append(s.byClass, index(c))
	}
	return s
}

// Stream scores one timeline.
func (s *Sink) Stream(t *sim.Timeline) {
	s.at, s.tokens = s.at[:0], s.tokens[:0]
	for _, c := range t.Chunks {
		s.at = append(s.at, float64(c.At-t.Arrival))
		s.tokens = append(s.tokens, c.Tokens)
	}
	if len(s.at) > 0 {
		s.ids[t.ID] = len(s.scores)
		for _, e := range s.exps {
			sc, _ := Score(e, s.at, s.tokens)
			s.scores = append(s.scores, sc)
		}
	}
	if s.next != nil {
		s.next.Stream(t)
	}
}

// Apply writes each scored stream's scores into r.Streams.
func (s *Sink) Apply(r *sim.Result) {
	for i := range r.Streams {
		st := &r.Streams[i]
		k, ok := s.ids[st.ID]
		if !ok || st.Status == sim.StatusRejected {
			continue
		}
		e := 0
		if c := int(st.Class); c >= 0 && c < len(s.byClass) {
			e = s.byClass[c]
		}
		sc := s.scores[k+e]
		st.Scored, st.QoE, st.Fluidity, st.FluidRate = true, float32(sc.QoE), float32(sc.Fluidity), float32(sc.FluidRate)
	}
}

var _ sim.TimelineSink = (*Sink)(nil)
