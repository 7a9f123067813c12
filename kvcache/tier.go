package kvcache

import "fmt"

// Offload tiers beneath the GPU (CPU DRAM, local SSD), as vLLM's CPU
// offloading and LMCache keep KV blocks there: a cached block the GPU
// evicts moves to the first tier instead of disappearing, a tier that is
// full moves its least recently stored block one tier down, and the last
// tier drops it. A prefix lookup that misses on the GPU looks in the tiers
// from the top; a block found there is loaded into a GPU block and leaves
// its tier (the hierarchy is exclusive: a block lives in one place). The
// loads are counted for the caller to price (TakeTierLoads); stores are
// written in the background and cost the GPU nothing.
//
// The first tier may share its capacity with swap space (the CPU tier):
// swapped-out sequences and cached blocks then take the same CPU blocks,
// and a swap-out that needs room moves cached blocks down.

// MaxTiers bounds the offload tiers of one cache.
const MaxTiers = 4

type tier struct {
	name     string
	capacity int  // blocks; for a tier sharing swap space, the swap space
	swap     bool // shares its blocks with swap space
	store    prefixCache
	hits     int64 // tokens found here by lookups that stuck
	loads    int64 // blocks loaded to the GPU
	stores   int64 // blocks moved in from above
	drops    int64 // blocks moved out to the tier below, or dropped from the last
	skips    int64 // blocks passed straight down: swap space held all of the tier
}

// TierStats are one tier's counters over a run.
type TierStats struct {
	Name      string
	Capacity  int   // blocks
	Held      int   // cached blocks held at the time of the call
	HitTokens int64 // tokens prefix lookups found in the tier
	Loaded    int64 // blocks loaded from the tier to the GPU
	Stored    int64 // blocks moved into the tier from the one above
	Dropped   int64 // blocks moved out of the tier to the one below, or dropped from the last
	Skipped   int64 // blocks passed straight down (swap space held all of a cpu tier)
}

// AddTier adds an offload tier of blocks blocks below the existing ones.
// sharesSwap makes it share swap space's blocks (then blocks must equal the
// swap space, and it must be the first tier). Prefix caching must be on,
// and no private block cached yet (with tiers every block is indexed).
func (m *Manager) AddTier(name string, blocks int, sharesSwap bool) error {
	switch {
	case m.prefix == nil:
		return fmt.Errorf("kvcache: offload tier %q needs prefix caching on", name)
	case m.prefix.marked+m.prefix.privEntries > 0:
		return fmt.Errorf("kvcache: offload tier %q added after private blocks were cached", name)
	case len(m.tiers) >= MaxTiers:
		return fmt.Errorf("kvcache: at most %d offload tiers", MaxTiers)
	case blocks < 1:
		return fmt.Errorf("kvcache: offload tier %q holds no block (capacity %d blocks)", name, blocks)
	case sharesSwap && (len(m.tiers) > 0 || blocks != m.swapTotal):
		return fmt.Errorf("kvcache: only the first tier can share swap space, at its size")
	}
	m.tiers = append(m.tiers, tier{name: name, capacity: blocks, swap: sharesSwap,
		store: prefixCache{index: newIndex(blocks)}})
	return nil
}

// Tiers is the number of offload tiers.
func (m *Manager) Tiers() int { return len(m.tiers) }

// TierStats returns every tier's counters, top first.
func (m *Manager) TierStats() []TierStats {
	out := make([]TierStats, len(m.tiers))
	for i := range m.tiers {
		t := &m.tiers[i]
		out[i] = TierStats{Name: t.name, Capacity: t.capacity, Held: t.store.index.n,
			HitTokens: t.hits, Loaded: t.loads, Stored: t.stores, Dropped: t.drops, Skipped: t.skips}
	}
	return out
}

// TakeTierLoads returns the blocks loaded from each tier since the last
// call, and starts counting again.
func (m *Manager) TakeTierLoads() [MaxTiers]int {
	l := m.tierLoads
	m.tierLoads = [MaxTiers]int{}
	return l
}

// room is how many more blocks tier t can take without moving any down.
func (m *Manager) room(t int) int {
	if m.tiers[t].swap {
		return m.swapFree
	}
	return m.tiers[t].capacity - m.tiers[t].store.index.n
}

// demote stores block id in tier t, moving the tier's least recently
// stored blocks down to make room; past the last tier it is dropped.
func (m *Manager) demote(t int, id uint64) {
	for ; t < len(m.tiers); t++ {
		if m.room(t) == 0 && m.tiers[t].store.any() {
			m.moveDown(t)
		}
		if m.room(t) > 0 {
			break
		}
		m.tiers[t].skips++ // swap space holds it all: the block passes down
	}
	if t == len(m.tiers) {
		return
	}
	tr := &m.tiers[t]
	c := &tr.store
	c.insert(id, 0)
	tr.stores++
	if tr.swap {
		m.swapFree--
	}
}

// moveDown moves tier t's least recently stored block one tier down.
func (m *Manager) moveDown(t int) {
	i, _ := m.tiers[t].store.first() // a tier holds entries only
	id := m.take(t, i)
	m.tiers[t].drops++
	m.demote(t+1, id)
}

// take removes entry i from tier t and returns its id.
func (m *Manager) take(t int, i int32) uint64 {
	tr := &m.tiers[t]
	c := &tr.store
	id := c.entries[i].id
	c.unlink(i)
	c.index.del(id, c.entries)
	c.entries[i] = entry{pos: unused}
	c.spare = append(c.spare, i)
	if tr.swap {
		m.swapFree++
	}
	return id
}

// loadFromTier looks id up in the tiers and, when found, loads it into a
// free GPU block (evicting an unreferenced GPU block if none is free) as a
// cached entry referenced once. It reports whether it did.
func (m *Manager) loadFromTier(id uint64) (int32, bool) {
	for t := range m.tiers {
		tr := &m.tiers[t]
		i, ok := tr.store.index.get(id, tr.store.entries)
		if !ok {
			continue
		}
		if m.free == 0 && m.evictable() == 0 {
			return 0, false // no GPU block to load it into
		}
		// Taken out before evicting, so the GPU block evicted to make room
		// cannot push it further down.
		m.take(t, i)
		if m.free == 0 {
			m.evict(1)
		}
		m.free--
		c := m.prefix
		e := c.insert(id, 1)
		c.refs++
		tr.loads++
		m.tierLoads[t]++
		m.acqTier[t]++
		return e, true
	}
	return 0, false
}

// forget removes id from the tier holding it, if any: the GPU caches it
// again, and a block lives in one place.
func (m *Manager) forget(id uint64) {
	for t := range m.tiers {
		if i, ok := m.tiers[t].store.index.get(id, m.tiers[t].store.entries); ok {
			m.take(t, i)
			return
		}
	}
}

// makeSwapRoom moves cached blocks out of a tier that shares swap space
// until n swap blocks are free or it holds none.
func (m *Manager) makeSwapRoom(n int) {
	if len(m.tiers) == 0 || !m.tiers[0].swap {
		return
	}
	for m.swapFree < n && m.tiers[0].store.any() {
		m.moveDown(0)
	}
}

// tierCached is the cached blocks of a tier sharing swap space: free for
// swap-outs, which move them down.
func (m *Manager) tierCached() int {
	if len(m.tiers) == 0 || !m.tiers[0].swap {
		return 0
	}
	return m.tiers[0].store.index.n
}

// checkTiers verifies the tiers' counters: a tier holds at most its
// capacity, each of its blocks is indexed once, and no block id is both on
// the GPU and in a tier, or in two tiers.
func (m *Manager) checkTiers() error {
	total := 0
	for t := range m.tiers {
		tr := &m.tiers[t]
		c := &tr.store
		if !tr.swap && c.index.n > tr.capacity {
			return fmt.Errorf("kvcache: tier %s holds %d blocks, capacity %d", tr.name, c.index.n, tr.capacity)
		}
		total += c.index.n
		if c.index.n > fullCheckBlocks {
			continue
		}
		held, listed := 0, 0
		for i := range c.entries {
			e := &c.entries[i]
			if !e.used() {
				continue
			}
			held++
			if j, ok := c.index.get(e.id, c.entries); !ok || j != int32(i) {
				return fmt.Errorf("kvcache: tier %s: block %#x is not indexed at its entry", tr.name, e.id)
			}
			if _, ok := m.prefix.index.get(e.id, m.prefix.entries); ok {
				return fmt.Errorf("kvcache: block %#x is both on the GPU and in tier %s", e.id, tr.name)
			}
			for u := t + 1; u < len(m.tiers); u++ {
				if _, ok := m.tiers[u].store.index.get(e.id, m.tiers[u].store.entries); ok {
					return fmt.Errorf("kvcache: block %#x is in tiers %s and %s", e.id, tr.name, m.tiers[u].name)
				}
			}
		}
		c.listed(func(int32) { listed++ })
		if held != c.index.n || listed != held {
			return fmt.Errorf("kvcache: tier %s: %d blocks held, %d indexed, %d listed", tr.name, held, c.index.n, listed)
		}
	}
	return nil
}
