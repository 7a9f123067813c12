package kvcache

import (
	"math/rand/v2"
	"testing"
)

// TestTiersCatchEvictionsAndLoadBack: blocks the GPU evicts go to the CPU
// tier, the CPU tier's oldest go to the SSD tier, the SSD tier drops its
// oldest, and a later lookup loads what a tier still holds.
func TestTiersCatchEvictionsAndLoadBack(t *testing.T) {
	m, err := New(8, 16, 4) // 8 GPU blocks; 4 swap blocks shared with the CPU tier
	if err != nil {
		t.Fatal(err)
	}
	m.EnablePrefixCaching()
	if err := m.AddTier("cpu", 4, true); err != nil {
		t.Fatal(err)
	}
	if err := m.AddTier("ssd", 2, false); err != nil {
		t.Fatal(err)
	}
	a := Content{Prompt: 128, Key: 1}
	var x Alloc
	compute(t, m, &x, &a, 128) // 8 blocks, all cached
	m.ReleasePrefix(&x, &a)
	m.Release(&x)
	// Another prompt of 8 blocks evicts all 8 of a's: 4 go to the CPU tier,
	// and as it fills, its oldest 4 move to the SSD tier, which keeps 2.
	b := Content{Prompt: 128, Key: 2}
	var y Alloc
	compute(t, m, &y, &b, 128)
	st := m.TierStats()
	if st[0].Held != 4 || st[1].Held != 2 || st[1].Dropped != 2 || st[0].Stored != 8 || st[0].Dropped != 4 {
		t.Fatalf("tiers after the eviction: %+v", st)
	}
	if err := m.Check([]Alloc{y}); err != nil {
		t.Fatal(err)
	}
	// a's evicted tail (released last block first, so evicted first) was
	// dropped or moved down; its head blocks 0..1 were dropped first from
	// the SSD tier... the lookup stops at the first block no tier holds.
	m.DropPrefix(&y)
	m.Release(&y)
	got := m.AcquirePrefix(&x, &a, 127)
	loads := m.TakeTierLoads()
	if got != 16*(loads[0]+loads[1]) {
		t.Fatalf("lookup found %d tokens, tiers loaded %v blocks", got, loads)
	}
	m.CountPrefixLookup(128, got)
	st = m.TierStats()
	if st[0].HitTokens+st[1].HitTokens != int64(got) {
		t.Fatalf("tier hit tokens %d + %d, lookup found %d", st[0].HitTokens, st[1].HitTokens, got)
	}
	if err := m.Check([]Alloc{x}); err != nil {
		t.Fatal(err)
	}
}

// TestTierSharesSwapSpace: a swap-out takes CPU blocks the CPU tier holds
// cached, moving them down, and swap plus cached never exceed the space.
func TestTierSharesSwapSpace(t *testing.T) {
	m, err := New(8, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	m.EnablePrefixCaching()
	if err := m.AddTier("cpu", 4, true); err != nil {
		t.Fatal(err)
	}
	a := Content{Prompt: 64, Key: 1}
	var x Alloc
	compute(t, m, &x, &a, 64)
	m.ReleasePrefix(&x, &a)
	m.Release(&x)
	var y Alloc
	if !m.Grow(&y, 128) { // evicts a's 4 cached blocks into the CPU tier
		t.Fatal("cannot grow")
	}
	if m.TierStats()[0].Held != 4 || m.SwapFree() != 4 {
		t.Fatalf("CPU tier %+v, swap free %d; want 4 cached, 4 available to swap", m.TierStats()[0], m.SwapFree())
	}
	m.Shrink(&y, 48) // 3 private blocks to swap out
	if n, ok := m.SwapOut(&y, 0); !ok || n != 3 {
		t.Fatalf("swap-out %d %v, want 3 blocks", n, ok)
	}
	if st := m.TierStats()[0]; st.Held != 1 || st.Dropped != 3 {
		t.Fatalf("CPU tier after the swap-out: %+v, want 1 block left, 3 dropped", st)
	}
	if err := m.Check([]Alloc{y}); err != nil {
		t.Fatal(err)
	}
}

// TestTiersConserveBlocksRandomly drives random starts, growth, swaps and
// finishes over a GPU with two tiers and checks the manager after each.
func TestTiersConserveBlocksRandomly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, err := New(40, 16, 12)
	if err != nil {
		t.Fatal(err)
	}
	m.EnablePrefixCaching()
	if err := m.AddTier("cpu", 12, true); err != nil {
		t.Fatal(err)
	}
	if err := m.AddTier("ssd", 30, false); err != nil {
		t.Fatal(err)
	}
	type seq struct {
		a   Alloc
		c   Content
		tok int
	}
	var live []*seq
	loaded := 0
	for step := range 3000 {
		switch op := rng.IntN(4); {
		case op == 0 && len(live) < 6:
			s := &seq{c: Content{Prompt: 16 * (1 + rng.IntN(6)), Key: uint64(rng.IntN(5))}}
			hit := m.AcquirePrefix(&s.a, &s.c, s.c.Prompt-1)
			for _, l := range m.TakeTierLoads() {
				loaded += l
			}
			if !m.Grow(&s.a, s.c.Prompt) {
				m.ReleasePrefix(&s.a, &s.c)
				break
			}
			m.CountPrefixLookup(s.c.Prompt, hit)
			s.tok = s.c.Prompt
			m.RegisterPrefix(&s.a, &s.c, s.tok)
			live = append(live, s)
		case op == 1 && len(live) > 0:
			s := live[rng.IntN(len(live))]
			if s.a.Swapped > 0 {
				if _, ok := m.SwapIn(&s.a); !ok {
					break
				}
				s.a.SharedBlocks = 0
				s.tok = 16 * s.a.Blocks
			}
			if m.Grow(&s.a, s.tok+8) {
				s.tok += 8
				m.RegisterPrefix(&s.a, &s.c, s.tok)
			}
		case op == 2 && len(live) > 0:
			s := live[rng.IntN(len(live))]
			if s.a.Swapped == 0 {
				cached := s.a.SharedBlocks
				m.ReleasePrefix(&s.a, &s.c)
				if _, ok := m.SwapOut(&s.a, cached); !ok {
					m.Release(&s.a)
					live = remove(live, s)
				}
			}
		case op == 3 && len(live) > 0:
			s := live[rng.IntN(len(live))]
			m.DropPrefix(&s.a)
			m.Release(&s.a)
			live = remove(live, s)
		}
		allocs := make([]Alloc, len(live))
		for i, s := range live {
			allocs[i] = s.a
		}
		if err := m.Check(allocs); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	st := m.TierStats()
	if st[0].Stored == 0 || st[1].Stored == 0 || loaded == 0 {
		t.Fatalf("the tiers were not exercised: %+v, %d loads", st, loaded)
	}
	if got := st[0].Loaded + st[1].Loaded; got != int64(loaded) {
		t.Fatalf("tiers count %d loads, TakeTierLoads returned %d", got, loaded)
	}
}

func remove[T comparable](s []T, v T) []T {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}
