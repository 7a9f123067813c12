package kvcache

import (
	"math/rand/v2"
	"testing"
)

func TestGrowAllOrNothing(t *testing.T) {
	m, err := New(10, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	var a, b Alloc
	if !m.Grow(&a, 100) { // 7 blocks
		t.Fatal("Grow(100 tokens) failed with 10 free blocks")
	}
	if a.Blocks != 7 || m.Free() != 3 {
		t.Fatalf("after Grow: alloc %+v free %d, want 7 blocks and 3 free", a, m.Free())
	}
	if m.Grow(&b, 64) { // needs 4, 3 free
		t.Fatal("Grow(64 tokens) succeeded with 3 free blocks")
	}
	if b.Blocks != 0 || m.Free() != 3 {
		t.Fatalf("failed Grow changed state: alloc %+v free %d", b, m.Free())
	}
	if !m.Grow(&a, 112) || a.Blocks != 7 { // still 7 blocks
		t.Fatalf("Grow within the last block: alloc %+v", a)
	}
	if !m.Grow(&a, 113) || a.Blocks != 8 {
		t.Fatalf("Grow across a block boundary: alloc %+v", a)
	}
	m.Release(&a)
	if m.Free() != 10 || a.Blocks != 0 || a.Swapped != 0 || a.SharedBlocks != 0 {
		t.Fatalf("after Release: free %d alloc %+v", m.Free(), a)
	}
}

func TestSwapRoundTrip(t *testing.T) {
	m, _ := New(10, 16, 5)
	var a, b Alloc
	m.Grow(&a, 16*6)
	if _, ok := m.SwapOut(&a, 0); ok {
		t.Fatal("swapped 6 blocks into 5 blocks of swap space")
	}
	m.Grow(&b, 16*3)
	n, ok := m.SwapOut(&b, 0)
	if !ok || n != 3 || b.Blocks != 0 || b.Swapped != 3 || m.Free() != 4 || m.SwapFree() != 2 {
		t.Fatalf("SwapOut: n=%d ok=%v alloc %+v free %d swapFree %d", n, ok, b, m.Free(), m.SwapFree())
	}
	if err := m.Check([]Alloc{a, b}); err != nil {
		t.Fatal(err)
	}
	n, ok = m.SwapIn(&b)
	if !ok || n != 3 || b.Blocks != 3 || m.Free() != 1 || m.SwapFree() != 5 {
		t.Fatalf("SwapIn: n=%d ok=%v alloc %+v free %d swapFree %d", n, ok, b, m.Free(), m.SwapFree())
	}
}

func TestNewRejectsImpossibleSizes(t *testing.T) {
	for _, c := range []struct{ total, bs, swap int }{{0, 16, 0}, {10, 0, 0}, {10, 16, -1}} {
		if _, err := New(c.total, c.bs, c.swap); err == nil {
			t.Errorf("New(%d,%d,%d): no error", c.total, c.bs, c.swap)
		}
	}
}

func TestReleaseTwicePanics(t *testing.T) {
	m, _ := New(4, 16, 0)
	var a Alloc
	m.Grow(&a, 64)
	b := a
	m.Release(&a)
	defer func() {
		if recover() == nil {
			t.Error("releasing the same blocks twice did not panic")
		}
	}()
	m.Release(&b)
}

// TestRandomOperationsKeepInvariants drives random grow/swap/release
// sequences and checks that blocks are never over-allocated or leaked.
func TestRandomOperationsKeepInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		m, _ := New(1+rng.IntN(64), 1+rng.IntN(32), rng.IntN(32))
		live := make([]Alloc, 8)
		tokens := make([]int, 8)
		for range 500 {
			i := rng.IntN(len(live))
			a := &live[i]
			switch rng.IntN(4) {
			case 0, 1:
				if a.Swapped == 0 {
					want := tokens[i] + rng.IntN(40)
					if m.Grow(a, want) {
						tokens[i] = want
					}
				}
			case 2:
				if a.Swapped == 0 {
					m.SwapOut(a, 0)
				} else {
					m.SwapIn(a)
				}
			case 3:
				m.Release(a)
				tokens[i] = 0
			}
			if m.Free() < 0 || m.SwapFree() < 0 {
				t.Fatalf("trial %d: negative free counts", trial)
			}
			if err := m.Check(live); err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
		}
		for i := range live {
			m.Release(&live[i])
		}
		if m.Free() != m.Total() || m.SwapFree() != m.SwapTotal() {
			t.Fatalf("trial %d: leaked blocks: free %d/%d swap %d/%d", trial, m.Free(), m.Total(), m.SwapFree(), m.SwapTotal())
		}
	}
}
