package kvcache

import (
	"slices"
	"testing"
)

// PromptBlocks names full prompt blocks exactly as the cache does, and a
// partial last block as a prompt block: two requests of one shared prefix
// agree on the prefix's blocks and differ after it.
func TestPromptBlocksNameAsTheCache(t *testing.T) {
	a := Content{Prompt: 100, SharedKey: 3, SharedTokens: 64, Key: 10, Own: true}
	b := Content{Prompt: 90, SharedKey: 3, SharedTokens: 64, Key: 11, Own: true}
	ia, ib := a.PromptBlocks(16, nil), b.PromptBlocks(16, nil)
	if len(ia) != 7 || len(ib) != 6 {
		t.Fatalf("got %d and %d ids, want ⌈100/16⌉ = 7 and ⌈90/16⌉ = 6", len(ia), len(ib))
	}
	for j := range 6 { // the six full blocks of a
		if ia[j] != a.Block(j, 16) {
			t.Errorf("block %d: PromptBlocks %x, Block %x: want the cache's id", j, ia[j], a.Block(j, 16))
		}
	}
	if !slices.Equal(ia[:4], ib[:4]) {
		t.Errorf("shared prefix blocks differ: %x vs %x", ia[:4], ib[:4])
	}
	if ia[4] == ib[4] || ia[6] == b.Block(6, 16) {
		t.Error("blocks past the shared prefix agree across requests, or a partial prompt block is named as generated tokens")
	}
}

// CachedPrefix sees what a sequence registered, stops at the first block
// missing, and changes nothing it reads.
func TestCachedPrefixReadsOnly(t *testing.T) {
	m := mustNew(t, 20)
	c := Content{Prompt: 100, SharedKey: 5, SharedTokens: 64, Key: 1, Own: true}
	var a Alloc
	compute(t, m, &a, &c, 100)
	other := Content{Prompt: 80, SharedKey: 5, SharedTokens: 64, Key: 2, Own: true}
	if got := m.CachedPrefix(&other, 80); got != 64 {
		t.Errorf("a request of the same prefix: %d cached tokens, want the 64 shared ones", got)
	}
	if got := m.CachedPrefix(&Content{Prompt: 80, Key: 9, Own: true}, 80); got != 0 {
		t.Errorf("a request sharing nothing: %d cached tokens, want 0", got)
	}
	m.ReleasePrefix(&a, &c)
	m.Release(&a)
	if got := m.CachedPrefix(&other, 80); got != 64 {
		t.Errorf("after the sequence ended: %d, want 64 still cached (evictable)", got)
	}
	off, _ := New(20, 16, 0)
	if got := off.CachedPrefix(&other, 80); got != 0 {
		t.Errorf("prefix caching off: %d, want 0", got)
	}
}
