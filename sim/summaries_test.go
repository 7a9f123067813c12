package sim

import (
	"slices"
	"testing"
)

// TestSummariesChunks: summaries added one at a time and in batches that
// straddle chunk boundaries read back in order through At, All, Last and
// Slice, and every chunk but the last is full.
func TestSummariesChunks(t *testing.T) {
	var s Summaries
	if s.Len() != 0 || len(s.Slice()) != 0 {
		t.Fatal("zero Summaries not empty")
	}
	n := 0
	add := func(k int) {
		batch := make([]StreamSummary, k)
		for i := range batch {
			batch[i].ID = n + i
		}
		if k == 1 {
			s.Append(batch[0])
		} else {
			s.Append(batch...)
		}
		n += k
	}
	for range 3000 {
		add(1)
	}
	add(summaryChunk) // across a boundary
	add(7)
	add(2*summaryChunk + 5)
	if s.Len() != n {
		t.Fatalf("Len %d, want %d", s.Len(), n)
	}
	for i := range n {
		if s.At(i).ID != i {
			t.Fatalf("At(%d).ID = %d", i, s.At(i).ID)
		}
	}
	if s.Last().ID != n-1 {
		t.Errorf("Last().ID = %d, want %d", s.Last().ID, n-1)
	}
	seen := 0
	for i, st := range s.All() {
		if i != seen || st.ID != i {
			t.Fatalf("All yielded %d, %d at %d", i, st.ID, seen)
		}
		seen++
	}
	if seen != n {
		t.Errorf("All yielded %d, want %d", seen, n)
	}
	for k, c := range s.chunks[:len(s.chunks)-1] {
		if len(c) != summaryChunk || cap(c) != summaryChunk {
			t.Errorf("chunk %d: len %d cap %d, want %d", k, len(c), cap(c), summaryChunk)
		}
	}
	s.At(5).Stalls = 9 // in place
	if got := s.Slice(); len(got) != n || got[5].Stalls != 9 || !slices.IsSortedFunc(got, func(a, b StreamSummary) int { return a.ID - b.ID }) {
		t.Error("Slice differs from the summaries")
	}
	if c := SummariesOf(s.Slice()...); c.Len() != n || c.At(n-1).ID != n-1 {
		t.Error("SummariesOf lost summaries")
	}
}

// TestSummariesReset: after Reset, summaries appended in batches of any
// size read back as in a new Summaries, shorter and longer than before,
// and a second filling of the same size allocates nothing.
func TestSummariesReset(t *testing.T) {
	var s Summaries
	for round, n := range []int{3*summaryChunk + 11, 5, 0, summaryChunk, 2*summaryChunk + 1, 4*summaryChunk + 3} {
		s.Reset()
		batch := make([]StreamSummary, n)
		for i := range batch {
			batch[i].ID = 1000*round + i
		}
		for i := 0; i < n; i += 1 + i%700 {
			s.Append(batch[i:min(n, i+1+i%700)]...)
		}
		if s.Len() != n || !slices.Equal(s.Slice(), batch) {
			t.Fatalf("round %d: %d summaries after Reset, want %d in order", round, s.Len(), n)
		}
		for k, c := range s.chunks {
			if want := min(summaryChunk, n-k*summaryChunk); len(c) != want {
				t.Fatalf("round %d: chunk %d holds %d, want %d", round, k, len(c), want)
			}
		}
	}
	batch := make([]StreamSummary, 2*summaryChunk)
	s.Reset()
	s.Append(batch...)
	if a := testing.AllocsPerRun(10, func() { s.Reset(); s.Append(batch...) }); a != 0 {
		t.Errorf("refilling after Reset allocates %v times", a)
	}
}
