package kvcache

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func mustNew(t *testing.T, blocks int) *Manager {
	t.Helper()
	m, err := New(blocks, 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.EnablePrefixCaching()
	return m
}

// compute grows a to tokens and registers its full blocks, as a prefill
// or decode step does.
func compute(t *testing.T, m *Manager, a *Alloc, c *Content, tokens int) {
	t.Helper()
	if !m.Grow(a, tokens) {
		t.Fatalf("cannot grow to %d tokens", tokens)
	}
	m.RegisterPrefix(a, c, tokens)
}

// TestRecomputeReusesOwnBlocks: a sequence evicted for recompute finds its
// own full prompt and output blocks still cached, as in vLLM V1.
func TestRecomputeReusesOwnBlocks(t *testing.T) {
	m := mustNew(t, 100)
	c := Content{Prompt: 100, Key: 7}
	var a Alloc
	compute(t, m, &a, &c, 100) // prompt
	compute(t, m, &a, &c, 150) // 50 generated tokens
	if a.SharedBlocks != 9 || a.Blocks != 1 {
		t.Fatalf("after 150 tokens: %+v, want 9 cached blocks and 1 private", a)
	}
	m.ReleasePrefix(&a, &c)
	m.Release(&a)
	if m.Free() != 100 || m.Cached() != 9 {
		t.Fatalf("free %d cached %d after release, want 100 and 9", m.Free(), m.Cached())
	}
	if hit := m.AcquirePrefix(&a, &c, 149); hit != 144 {
		t.Errorf("recompute found %d tokens, want 144 (9 full blocks of prompt and output)", hit)
	}
	if err := m.Check([]Alloc{a}); err != nil {
		t.Error(err)
	}
	// Another request's prompt shares nothing; one of the same key shares the prompt.
	other, same := Content{Prompt: 100, Key: 8}, Content{Prompt: 100, Key: 7, OutKey: 99}
	var b, d Alloc
	if hit := m.AcquirePrefix(&b, &other, 99); hit != 0 {
		t.Errorf("an unrelated prompt found %d tokens", hit)
	}
	if hit := m.AcquirePrefix(&d, &same, 99); hit != 96 {
		t.Errorf("the same prompt found %d tokens, want 96 (6 full blocks below the last token)", hit)
	}
	if err := m.Check([]Alloc{a, b, d}); err != nil {
		t.Error(err)
	}
}

// TestEvictionTailFirst: freed blocks are evicted least recently freed
// first, a sequence's tail before its head, and only when needed.
func TestEvictionTailFirst(t *testing.T) {
	m := mustNew(t, 8)
	c := Content{Prompt: 64, Key: 1}
	var a Alloc
	compute(t, m, &a, &c, 64)
	m.ReleasePrefix(&a, &c)
	m.Release(&a)
	var b Alloc
	if !m.Grow(&b, 16*4) { // the four free blocks: nothing evicted
		t.Fatal("cannot grow")
	}
	if _, _, ev := m.PrefixStats(); ev != 0 {
		t.Errorf("%d evictions while free blocks remained", ev)
	}
	if !m.Grow(&b, 16*5) { // one more: the last of a's four is evicted
		t.Fatal("cannot grow into the evictable blocks")
	}
	if _, _, ev := m.PrefixStats(); ev != 1 {
		t.Errorf("%d evictions, want 1", ev)
	}
	var again Alloc
	if hit := m.AcquirePrefix(&again, &c, 64); hit != 48 {
		t.Errorf("after evicting one block, the head still cached holds %d tokens, want 48", hit)
	}
	if err := m.Check([]Alloc{b, again}); err != nil {
		t.Error(err)
	}
}

// TestSharedPrefixAndUnits: a shared-prefix group's blocks and explicit
// unit ids name the same content for every request that carries them.
func TestSharedPrefixAndUnits(t *testing.T) {
	a := Content{Prompt: 200, SharedKey: 5, SharedTokens: 100, Key: 1}
	b := Content{Prompt: 300, SharedKey: 5, SharedTokens: 100, Key: 2}
	for j := range 6 {
		if a.Block(j, 16) != b.Block(j, 16) {
			t.Errorf("block %d of the shared 100-token prefix differs", j)
		}
	}
	if a.Block(6, 16) == b.Block(6, 16) {
		t.Error("the block straddling the end of the shared prefix is shared")
	}
	u := Content{Units: []uint64{11, 12}, UnitTokens: 64, Prompt: 100, Key: 3}
	v := Content{Units: []uint64{11, 13}, UnitTokens: 64, Prompt: 128, Key: 4}
	for j := range 4 {
		if u.Block(j, 16) != v.Block(j, 16) {
			t.Errorf("block %d of the shared unit differs", j)
		}
	}
	if u.Block(4, 16) == v.Block(4, 16) {
		t.Error("blocks of different units are equal")
	}
	conv := Content{Prompt: 100, Key: 9} // a turn's answer is its next turn's prompt
	next := Content{Prompt: 300, Key: 9}
	if conv.Block(8, 16) != next.Block(8, 16) {
		t.Error("a conversation's answer block differs from the next turn's prompt block")
	}
}

// TestIndexMatchesMap drives the open-addressing index with random puts
// and deletes against a Go map.
func TestIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	x := newIndex(n)
	entries := make([]entry, n)
	ref := map[uint64]int32{}
	free := make([]int32, 0, n)
	for i := range int32(n) {
		free = append(free, i)
	}
	for step := range 20000 {
		if len(free) > 0 && (len(ref) == 0 || r.IntN(2) == 0) {
			e := free[len(free)-1]
			free = free[:len(free)-1]
			id := r.Uint64() & 0xfff // force collisions
			if _, ok := ref[id]; ok {
				free = append(free, e)
				continue
			}
			entries[e].id = id
			x.put(id, e)
			ref[id] = e
		} else {
			for id, e := range ref {
				x.del(id, entries)
				delete(ref, id)
				free = append(free, e)
				break
			}
		}
		if step%97 == 0 {
			for id, e := range ref {
				if got, ok := x.get(id, entries); !ok || got != e {
					t.Fatalf("step %d: id %#x at %d, %v; want %d", step, id, got, ok, e)
				}
			}
			if x.n != len(ref) {
				t.Fatalf("step %d: %d indexed, want %d", step, x.n, len(ref))
			}
		}
	}
}

// TestWarm fills the cache as an earlier run would have left it.
func TestWarm(t *testing.T) {
	m := mustNew(t, 10)
	c := Content{Prompt: 70, Key: 4}
	if n := m.Warm(&c, 70); n != 4 {
		t.Fatalf("warmed %d blocks, want 4", n)
	}
	var a Alloc
	if hit := m.AcquirePrefix(&a, &c, 69); hit != 64 {
		t.Errorf("found %d tokens, want 64", hit)
	}
	if err := m.Check([]Alloc{a}); err != nil {
		t.Error(err)
	}
}

// TestRandomPrefixOperationsKeepInvariants drives sequences of a few
// shared contents through random starts (acquire), growth with
// registration, swaps and releases: every block stays free, private to one
// sequence or cached (Check: references equal the blocks sequences share,
// only unreferenced blocks are evictable), evictions never touch a
// referenced block (evict panics if one is listed), and nothing leaks.
func TestRandomPrefixOperationsKeepInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	for trial := range 200 {
		m, _ := New(8+rng.IntN(80), 16, rng.IntN(40))
		m.EnablePrefixCaching()
		const n = 6
		live := make([]Alloc, n)
		tokens := make([]int, n)
		contents := make([]Content, n)
		newContent := func(i int) {
			k := uint64(1 + rng.IntN(3)) // three contents: sequences collide often
			contents[i] = Content{Prompt: 16 * (1 + rng.IntN(6)), Key: k, SharedKey: 99, SharedTokens: 16 * rng.IntN(3)}
		}
		for i := range n {
			newContent(i)
		}
		for range 400 {
			i := rng.IntN(n)
			a, c := &live[i], &contents[i]
			switch rng.IntN(5) {
			case 0: // (re)start: take what is cached
				if a.Blocks == 0 && a.SharedBlocks == 0 && a.Swapped == 0 {
					*a = a.Recycle() // another sequence
					newContent(i)
					tokens[i] = m.AcquirePrefix(a, c, c.Prompt+40)
				}
			case 1, 2: // compute more tokens
				if a.Swapped == 0 {
					want := tokens[i] + 1 + rng.IntN(40)
					if m.Grow(a, want) {
						tokens[i] = want
						m.RegisterPrefix(a, c, want)
					}
				}
			case 3:
				if a.Swapped == 0 {
					shared := a.SharedBlocks
					m.ReleasePrefix(a, c)
					if _, ok := m.SwapOut(a, shared); !ok {
						m.Release(a)
						tokens[i] = 0
					}
				} else if _, ok := m.SwapIn(a); !ok {
					m.Release(a)
					tokens[i] = 0
				}
			case 4:
				m.DropPrefix(a)
				m.Release(a)
				tokens[i] = 0
			}
			if err := m.Check(live); err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
		}
		for i := range live {
			m.DropPrefix(&live[i])
			m.Release(&live[i])
		}
		if m.Free() != m.Total() || m.SwapFree() != m.SwapTotal() {
			t.Fatalf("trial %d: leaked blocks: free %d/%d swap %d/%d", trial, m.Free(), m.Total(), m.SwapFree(), m.SwapTotal())
		}
		if err := m.Check(nil); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

// TestEvictionRingIsAList drives the eviction ring (pushTail, unlink,
// first, and packing at any moment, as a full ring or a place reaching
// maxPlace would) with random operations against a plain ordered list:
// it lists the same entries in the same order, and first is the head.
func TestEvictionRingIsAList(t *testing.T) {
	// Two mixes of operations: packings at random moments; and many hits
	// between rare evictions, so the ring fills with dropped places and
	// packs in place while its places wrap around it.
	for _, mix := range [][4]int{{5, 7, 9, 10}, {5, 9, 10, 10}} {
		ringAgainstList(t, mix)
	}
	// And one packing in place whose places wrap around the ring: 16
	// places, the listed ones at slots 12..15 and 0..2, two of them taken
	// off.
	c := &prefixCache{entries: make([]entry, 20)}
	for i := range c.entries {
		c.entries[i].pos = notListed
	}
	for i := range int32(16) {
		c.pushTail(i)
	}
	for range 12 {
		i, _ := c.first()
		c.unlink(i)
		c.head++
	}
	for i := int32(16); i < 19; i++ {
		c.pushTail(i)
	}
	c.unlink(13)
	c.unlink(14)
	c.makeRoom()
	var got []int32
	c.listed(func(i int32) { got = append(got, i) })
	if want := []int32{12, 15, 16, 17, 18}; !slices.Equal(got, want) || len(c.ring) != 16 {
		t.Errorf("packed in place, the ring of %d places lists %v, want %v", len(c.ring), got, want)
	}
}

// ringAgainstList runs the ring and the list through random operations:
// below mix[0] in ten a listing, below mix[1] a hit, below mix[2] an
// eviction, below mix[3] a packing.
func ringAgainstList(t *testing.T, mix [4]int) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 200
	c := &prefixCache{entries: make([]entry, n)}
	for i := range c.entries {
		c.entries[i].pos = notListed
	}
	var want []int32
	on := make([]bool, n)
	packs := 0
	for step := range 50000 {
		if c.tail-c.head == int32(len(c.ring)) {
			packs++
		}
		switch k := r.IntN(10); {
		case k < mix[0]: // list an entry that is off the list
			i := int32(r.IntN(n))
			if !on[i] {
				c.pushTail(i)
				want, on[i] = append(want, i), true
			}
		case k < mix[1]: // take a listed one off (a hit)
			if len(want) > 0 {
				j := r.IntN(len(want))
				i := want[j]
				c.unlink(i)
				want, on[i] = slices.Delete(want, j, j+1), false
			}
		case k < mix[2]: // evict the first, as evict does
			i, ok := c.first()
			if len(want) == 0 {
				if ok {
					t.Fatalf("mix %v, step %d: first is %d on an empty list", mix, step, i)
				}
				continue
			}
			if i != want[0] {
				t.Fatalf("mix %v, step %d: first is %d, want %d", mix, step, i, want[0])
			}
			c.unlink(i)
			c.head++
			want, on[i] = want[1:], false
		case k < mix[3]:
			c.makeRoom()
		}
		var got []int32
		c.listed(func(i int32) { got = append(got, i) })
		if !slices.Equal(got, want) {
			t.Fatalf("mix %v, step %d: the ring lists %v, want %v", mix, step, got, want)
		}
	}
	if len(c.ring) > 4*n {
		t.Errorf("mix %v: the ring grew to %d places for %d entries", mix, len(c.ring), n)
	}
	if mix[3] == mix[2] && packs == 0 {
		t.Errorf("mix %v: the ring never filled", mix)
	}
}

// TestPrivateBlocksChangeNothing runs the same random starts, steps,
// preemptions (swap and recompute, restarted with the same content) and
// finishes on two managers, one told that each sequence's own key is its
// alone (Content.Own) and one not: every result — hits, growths, swaps,
// free and cached blocks, evictions — is the same, and both stay
// consistent. Requests share a system prompt and prefix units, so private
// and indexed blocks mix on the eviction list.
func TestPrivateBlocksChangeNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	units := []uint64{71, 72, 73}
	restartHits := 0
	for trial := range 300 {
		blocks, swap := 8+rng.IntN(100), rng.IntN(40)
		var ms [2]*Manager
		for k := range ms {
			ms[k], _ = New(blocks, 16, swap)
			ms[k].EnablePrefixCaching()
		}
		const (
			idle = iota
			running
			swapped
			evicted // preempted for recompute: restarts with its content
		)
		type seq struct {
			c     [2]Content
			a     [2]Alloc
			state int
			len   int // tokens: prompt and generated
			comp  int // of which computed (in the cache)
		}
		const n = 6
		seqs := make([]seq, n)
		key := uint64(1000)
		fresh := func(s *seq) {
			key++
			c := Content{Prompt: 16 * (1 + rng.IntN(8)), Key: key}
			switch rng.IntN(3) {
			case 0:
				c.SharedKey, c.SharedTokens = 99, 16*rng.IntN(4)
			case 1:
				c.Units, c.UnitTokens = units[:1+rng.IntN(3)], 32
			}
			s.c[0], s.c[1] = c, c
			s.c[1].Own = true
			for k := range s.a {
				s.a[k] = s.a[k].Recycle()
			}
			s.state, s.len, s.comp = idle, c.Prompt, 0
		}
		for i := range seqs {
			fresh(&seqs[i])
		}
		same := func(step int, what string, x, y any) {
			t.Helper()
			if x != y {
				t.Fatalf("trial %d, step %d: %s: %v without private blocks, %v with", trial, step, what, x, y)
			}
		}
		for step := range 500 {
			s := &seqs[rng.IntN(n)]
			switch op := rng.IntN(5); {
			case op == 0 && (s.state == idle || s.state == evicted): // a start or a restart, as startWaiting does
				var hit [2]int
				var ok [2]bool
				chunk := 1 + rng.IntN(64) // a chunked prefill's first chunk
				for k, m := range ms {
					a, c := &s.a[k], &s.c[k]
					hit[k] = m.AcquirePrefix(a, c, s.len-1)
					to := min(s.len, hit[k]+chunk)
					if ok[k] = m.Grow(a, to); ok[k] {
						m.RegisterPrefix(a, c, to)
					} else {
						m.ReleasePrefix(a, c)
					}
				}
				same(step, "hit", hit[0], hit[1])
				same(step, "start", ok[0], ok[1])
				if ok[0] {
					if s.state == evicted && hit[0] > 0 {
						restartHits++
					}
					s.state, s.comp = running, min(s.len, hit[0]+chunk)
				}
			case op == 1 && s.state == running: // a step: the prefill's next chunk, or decodes
				want := min(s.len, s.comp+1+rng.IntN(64))
				if s.comp == s.len {
					want = s.len + 1 + rng.IntN(40)
				}
				var ok [2]bool
				for k, m := range ms {
					if ok[k] = m.Grow(&s.a[k], want); ok[k] {
						m.RegisterPrefix(&s.a[k], &s.c[k], want)
					}
				}
				same(step, "grow", ok[0], ok[1])
				if ok[0] {
					s.comp, s.len = want, max(s.len, want)
				}
			case op == 2 && s.state == running: // preempted: swapped out, else recomputed
				var ok [2]bool
				for k, m := range ms {
					cached := s.a[k].SharedBlocks
					m.ReleasePrefix(&s.a[k], &s.c[k])
					if _, ok[k] = m.SwapOut(&s.a[k], cached); !ok[k] {
						m.Release(&s.a[k])
					}
				}
				same(step, "swap out", ok[0], ok[1])
				s.state = swapped
				if !ok[0] {
					s.state = evicted
				}
			case op == 2 && s.state == swapped: // swapped back in, registered again
				var ok [2]bool
				for k, m := range ms {
					if _, ok[k] = m.SwapIn(&s.a[k]); ok[k] {
						m.RegisterPrefix(&s.a[k], &s.c[k], s.comp)
					}
				}
				same(step, "swap in", ok[0], ok[1])
				if ok[0] {
					s.state = running
				}
			case op == 3 && s.state != idle: // finished, aborted or rejected
				for k, m := range ms {
					m.DropPrefix(&s.a[k])
					m.Release(&s.a[k])
				}
				fresh(s)
			}
			a0, a1 := &s.a[0], &s.a[1]
			same(step, "shared blocks", a0.SharedBlocks, a1.SharedBlocks)
			same(step, "private blocks", a0.Blocks, a1.Blocks)
			same(step, "swapped blocks", a0.Swapped, a1.Swapped)
			same(step, "free", ms[0].Free(), ms[1].Free())
			same(step, "cached", ms[0].Cached(), ms[1].Cached())
			_, _, e0 := ms[0].PrefixStats()
			_, _, e1 := ms[1].PrefixStats()
			same(step, "evictions", e0, e1)
			for k, m := range ms {
				live := make([]Alloc, n)
				for i := range seqs {
					live[i] = seqs[i].a[k]
				}
				if err := m.Check(live); err != nil {
					t.Fatalf("trial %d, step %d, manager %d: %v", trial, step, k, err)
				}
			}
		}
	}
	if restartHits < 100 {
		t.Errorf("only %d restarts found blocks of their own still cached: the test does not reach Alloc.past", restartHits)
	}
}

// TestPrivateFromIsPrivate: every block from Content.privateFrom on is
// private by Content.name's rules, over random contents with prefix units
// and shared prefixes of any size; a content that is not Own has none.
func TestPrivateFromIsPrivate(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	units := []uint64{5, 6, 7, 8}
	for trial := range 2000 {
		bs := 1 + rng.IntN(32)
		c := Content{Prompt: 1 + rng.IntN(400), Key: 9, Own: trial%5 != 0, SharedKey: 3, SharedTokens: rng.IntN(300)}
		if rng.IntN(2) == 0 {
			c.Units, c.UnitTokens = units[:1+rng.IntN(4)], 1+rng.IntN(100)
		}
		from := int(c.privateFrom(bs))
		if !c.Own {
			if from != math.MaxInt32 {
				t.Fatalf("trial %d: a content that is not Own is private from block %d", trial, from)
			}
			continue
		}
		for j := from; j < from+40; j++ {
			if _, private := c.name(j, bs); !private {
				t.Fatalf("trial %d: %+v, blocks of %d: block %d is not private, though private from %d", trial, c, bs, j, from)
			}
		}
	}
}
