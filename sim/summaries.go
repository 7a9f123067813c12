package sim

import "iter"

// summaryChunk is how many summaries a full chunk of Summaries holds
// (4096 × 144 bytes: 576 KiB).
const summaryChunk = 4096

// Summaries is a run's stream summaries, in the order they were added,
// kept in chunks of a fixed size: adding one never copies those before it,
// so a run of a million requests holds each summary once, not, while a
// single slice grows, the old array and the new one at the same time. The
// zero value is empty and ready to use. Like a slice, a copy of a
// Summaries shares its elements; Append to only one of the copies.
type Summaries struct {
	// chunks are all full (summaryChunk long) but the last, which grows
	// up to summaryChunk.
	chunks [][]StreamSummary
	n      int
}

// SummariesOf returns summaries holding a copy of s.
func SummariesOf(s ...StreamSummary) Summaries {
	var out Summaries
	out.Append(s...)
	return out
}

// Len is the number of summaries.
func (s *Summaries) Len() int { return s.n }

// At returns summary i (0 ≤ i < Len) for reading or changing in place.
func (s *Summaries) At(i int) *StreamSummary {
	return &s.chunks[i/summaryChunk][i%summaryChunk]
}

// Last returns the summary added last; Len must be at least 1.
func (s *Summaries) Last() *StreamSummary { return s.At(s.n - 1) }

// Append adds summaries at the end.
func (s *Summaries) Append(v ...StreamSummary) {
	for len(v) > 0 {
		k := len(s.chunks) - 1
		if k < 0 || len(s.chunks[k]) == summaryChunk {
			if len(s.chunks) < cap(s.chunks) { // a chunk Reset kept
				s.chunks = s.chunks[:k+2]
				s.chunks[k+1] = s.chunks[k+1][:0]
			} else {
				s.chunks = append(s.chunks, nil)
			}
			k++
		}
		c := s.chunks[k]
		m := min(len(v), summaryChunk-len(c))
		if len(c)+m > cap(c) { // grow the last chunk, doubling up to a full one
			g := make([]StreamSummary, len(c), min(summaryChunk, max(16, 2*cap(c), len(c)+m)))
			copy(g, c)
			c = g
		}
		s.chunks[k] = append(c, v[:m]...)
		s.n += m
		v = v[m:]
	}
}

// Reset empties s and keeps its chunks for the summaries appended next,
// which overwrite those it held: nothing may still read them (nor a copy
// of s made before).
func (s *Summaries) Reset() {
	for i := range s.chunks {
		s.chunks[i] = s.chunks[i][:0]
	}
	s.chunks = s.chunks[:0]
	s.n = 0
}

// All yields each summary's index and, for reading or changing in place,
// the summary, in order.
func (s *Summaries) All() iter.Seq2[int, *StreamSummary] {
	return func(yield func(int, *StreamSummary) bool) {
		i := 0
		for _, c := range s.chunks {
			for j := range c {
				if !yield(i, &c[j]) {
					return
				}
				i++
			}
		}
	}
}

// Slice returns a copy of the summaries as one slice (for tests and small
// results; a long run's summaries are better read with At or All).
func (s *Summaries) Slice() []StreamSummary {
	out := make([]StreamSummary, 0, s.n)
	for _, c := range s.chunks {
		out = append(out, c...)
	}
	return out
}
