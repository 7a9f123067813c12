package qoe

import (
	"math"
	"slices"

	"github.com/itlsim/itlsim/sim"
)

// Sink scores every finished stream of a simulation as the engine hands
// over its timeline (it implements sim.TimelineSink) and, after the run,
// writes the scores into the result's stream summaries (Apply). A stream
// is scored under each distinct expectation of the run (the run's and its
// classes'), since its class is known only from the result; Apply picks
// its class's. It keeps three float32 numbers (as the summaries hold
// them) per stream and expectation and a 4-byte index per request, in
// chunks that are never copied, and allocates nothing per stream but a
// new chunk now and then (streams whose ids are not dense request indexes
// take a map entry each).
type Sink struct {
	exps    []Expectation
	byClass []int // class index → index into exps; -1: the run's (0)
	next    sim.TimelineSink
	at      []float64
	tokens  []int
	// slot[id] is 1 + the index in scores of stream id's first score (0:
	// not scored); ids are the requests' dense indexes, others go to far.
	slot    chunks[int32]
	far     map[int]int
	scores  chunks[score32]
	nScores int
}

// score32 is a stream's Scores as its summary keeps them.
type score32 struct{ qoe, fluidity, fluidRate float32 }

// chunkLen is the length of a chunk of a Sink's storage.
const chunkLen = 1 << 14

// chunks is a growable array in fixed-size chunks: growing it never copies
// what it holds.
type chunks[T any] struct{ c [][]T }

// at returns element i, growing the array to hold it.
func (c *chunks[T]) at(i int) *T {
	for i/chunkLen >= len(c.c) {
		c.c = append(c.c, make([]T, chunkLen))
	}
	return &c.c[i/chunkLen][i%chunkLen]
}

// get returns element i, or the zero value beyond the array.
func (c *chunks[T]) get(i int) T {
	if i/chunkLen >= len(c.c) {
		var zero T
		return zero
	}
	return c.c[i/chunkLen][i%chunkLen]
}

// NewSink scores against run (streams without a class) and classes[i]
// (streams of class i; a zero expectation takes the run's). next, if not
// nil, receives every timeline after scoring.
func NewSink(run sim.QoE, classes []sim.QoE, next sim.TimelineSink) *Sink {
	s := &Sink{next: next, far: map[int]int{}}
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
	n := len(t.Chunks)
	s.at, s.tokens = slices.Grow(s.at[:0], n)[:n], slices.Grow(s.tokens[:0], n)[:n]
	at, tokens := s.at, s.tokens
	for i, c := range t.Chunks {
		at[i], tokens[i] = float64(c.At-t.Arrival), c.Tokens
	}
	if len(s.at) > 0 {
		s.put(t.ID, s.nScores)
		for _, e := range s.exps {
			sc, _ := Score(e, s.at, s.tokens)
			*s.scores.at(s.nScores) = score32{float32(sc.QoE), float32(sc.Fluidity), float32(sc.FluidRate)}
			s.nScores++
		}
	}
	if s.next != nil {
		s.next.Stream(t)
	}
}

// Apply writes each scored stream's scores into r.Streams.
func (s *Sink) Apply(r *sim.Result) {
	for _, st := range r.Streams.All() {
		k, ok := s.get(st.ID)
		if !ok || st.Status == sim.StatusRejected {
			continue
		}
		e := 0
		if c := int(st.Class); c >= 0 && c < len(s.byClass) {
			e = s.byClass[c]
		}
		sc := s.scores.get(k + e)
		st.Scored, st.QoE, st.Fluidity, st.FluidRate = true, sc.qoe, sc.fluidity, sc.fluidRate
	}
}

// maxSlot bounds the dense index: ids beyond it (a trace's own ids) go to a map.
const maxSlot = 1 << 26

func (s *Sink) put(id, k int) {
	if id < 0 || id >= maxSlot || k >= math.MaxInt32 {
		s.far[id] = k
		return
	}
	*s.slot.at(id) = int32(k + 1)
}

func (s *Sink) get(id int) (int, bool) {
	if id >= 0 && id < maxSlot {
		if k := s.slot.get(id); k > 0 {
			return int(k - 1), true
		}
	}
	k, ok := s.far[id]
	return k, ok
}

var _ sim.TimelineSink = (*Sink)(nil)
