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
