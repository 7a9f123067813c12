package kvcache

import "fmt"

// Prefix caching: a request's prompt is a sequence of prefix units (for
// Mooncake traces, 512 tokens each), each named by an id that identifies
// its content together with everything before it. A fully computed unit is
// registered in the cache; a later request whose prompt starts with the
// same ids references those blocks instead of computing them again.
// Cached blocks are reference-counted while sequences use them; when none
// does they stay cached but evictable, and are evicted least recently used
// when a sequence needs blocks and none are free.
//
// The lookup and registration run once per request start and per prefill
// chunk, not per token; the id index is a map for that reason.

type entry struct {
	id         uint64
	refs       int
	blocks     int
	prev, next int32 // LRU list of unreferenced entries; -1 ends it
}

type prefixCache struct {
	entries   []entry
	spare     []int32 // indexes of unused entries
	index     map[uint64]int32
	head      int32 // least recently used unreferenced entry
	tail      int32
	evictable int // blocks of unreferenced entries

	QueriedTokens int64 // prompt tokens looked up
	HitTokens     int64 // of which found in the cache
	Evictions     int64 // entries evicted
}

// EnablePrefixCaching turns prefix caching on for the manager. The cache
// itself is built when the first prompt with prefix ids arrives, so runs
// without them pay nothing.
func (m *Manager) EnablePrefixCaching() { m.prefixOn = true }

// PrefixCaching reports whether prefix caching is on.
func (m *Manager) PrefixCaching() bool { return m.prefixOn }

// cache returns the prefix cache, building it on first use. Its index is
// sized for a cache full of one-block units, so inserting never grows the
// map while the run goes on.
func (m *Manager) cache() *prefixCache {
	if m.prefix == nil && m.prefixOn {
		m.prefix = &prefixCache{index: make(map[uint64]int32, m.total), head: -1, tail: -1}
	}
	return m.prefix
}

// PrefixStats returns the prompt tokens looked up in the prefix cache, the
// tokens found, and the entries evicted so far.
func (m *Manager) PrefixStats() (queried, hits, evictions int64) {
	if m.prefix == nil {
		return 0, 0, 0
	}
	return m.prefix.QueriedTokens, m.prefix.HitTokens, m.prefix.Evictions
}

func (c *prefixCache) unlink(i int32) {
	e := &c.entries[i]
	if e.prev >= 0 {
		c.entries[e.prev].next = e.next
	} else {
		c.head = e.next
	}
	if e.next >= 0 {
		c.entries[e.next].prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (c *prefixCache) pushTail(i int32) {
	e := &c.entries[i]
	e.prev, e.next = c.tail, -1
	if c.tail >= 0 {
		c.entries[c.tail].next = i
	} else {
		c.head = i
	}
	c.tail = i
}

// unitBlocks is the number of KV blocks one prefix unit fills, 0 when a
// unit is not a whole number of blocks (such prompts are not shared).
func (m *Manager) unitBlocks(unitTokens int) int {
	if unitTokens <= 0 || unitTokens%m.blockSize != 0 {
		return 0
	}
	return unitTokens / m.blockSize
}

// AcquirePrefix looks up the leading units of a prompt (ids, unitTokens
// tokens each) in the cache and references the cached ones, up to limit
// tokens (at least the last token must still be computed to sample). It
// returns how many tokens were found: the sequence starts its prefill there.
// The caller reports a lookup that stuck with CountPrefixLookup.
func (m *Manager) AcquirePrefix(a *Alloc, ids []uint64, unitTokens, limit int) int {
	c := m.cache()
	ub := m.unitBlocks(unitTokens)
	if c == nil || ub == 0 || a.SharedUnits != 0 || a.Blocks != 0 {
		return 0
	}
	for _, id := range ids {
		if (a.SharedUnits+1)*unitTokens > limit {
			break
		}
		i, ok := c.index[id]
		if !ok {
			break
		}
		e := &c.entries[i]
		if e.refs == 0 {
			c.unlink(i)
			c.evictable -= e.blocks
		}
		e.refs++
		a.SharedUnits++
		a.SharedBlocks += e.blocks
	}
	return a.SharedUnits * unitTokens
}

// CountPrefixLookup records a prompt of queried tokens that started with
// hit tokens found in the cache (vLLM's prefix cache hit rate counts them).
func (m *Manager) CountPrefixLookup(queried, hit int) {
	if c := m.cache(); c != nil {
		c.QueriedTokens += int64(queried)
		c.HitTokens += int64(hit)
	}
}

// RegisterPrefix makes every fully computed prompt unit beyond those the
// sequence already shares a cache entry, moving its blocks from the
// sequence's private ones to the cache (or, when another sequence cached the
// same unit meanwhile, dropping the private copy and sharing that one).
func (m *Manager) RegisterPrefix(a *Alloc, ids []uint64, unitTokens, computed int) {
	c := m.cache()
	ub := m.unitBlocks(unitTokens)
	if c == nil || ub == 0 {
		return
	}
	for a.SharedUnits < len(ids) && (a.SharedUnits+1)*unitTokens <= computed && a.Blocks >= ub {
		id := ids[a.SharedUnits]
		a.Blocks -= ub
		if i, ok := c.index[id]; ok {
			e := &c.entries[i]
			if e.refs == 0 {
				c.unlink(i)
				c.evictable -= e.blocks
			}
			e.refs++
			m.free += ub // the private copy is dropped
		} else {
			var i int32
			if n := len(c.spare); n > 0 {
				i = c.spare[n-1]
				c.spare = c.spare[:n-1]
			} else {
				c.entries = append(c.entries, entry{})
				i = int32(len(c.entries) - 1)
			}
			c.entries[i] = entry{id: id, refs: 1, blocks: ub, prev: -1, next: -1}
			c.index[id] = i
		}
		a.SharedUnits++
		a.SharedBlocks += ub
	}
}

// ReleasePrefix drops the sequence's references to cached units (ids are
// the sequence's prompt ids). Unreferenced entries stay cached, evictable.
func (m *Manager) ReleasePrefix(a *Alloc, ids []uint64) {
	c := m.prefix
	if c == nil || a.SharedUnits == 0 {
		return
	}
	if a.SharedUnits > len(ids) {
		panic("kvcache: a sequence shares more prefix units than its prompt has")
	}
	for _, id := range ids[:a.SharedUnits] {
		i, ok := c.index[id]
		if !ok || c.entries[i].refs <= 0 {
			panic(fmt.Sprintf("kvcache: releasing prefix unit %d that is not referenced", id))
		}
		e := &c.entries[i]
		e.refs--
		if e.refs == 0 {
			c.pushTail(i)
			c.evictable += e.blocks
		}
	}
	a.SharedUnits, a.SharedBlocks = 0, 0
}

// evict frees unreferenced cache entries, least recently used first,
// until need blocks are free or nothing is left to evict.
func (m *Manager) evict(need int) {
	c := m.prefix
	for c != nil && m.free < need && c.head >= 0 {
		i := c.head
		e := &c.entries[i]
		c.unlink(i)
		c.evictable -= e.blocks
		m.free += e.blocks
		delete(c.index, e.id)
		*e = entry{prev: -1, next: -1}
		c.spare = append(c.spare, i)
		c.Evictions++
	}
}

func (m *Manager) evictable() int {
	if m.prefix == nil {
		return 0
	}
	return m.prefix.evictable
}

// checkPrefix verifies the cache's counters: referenced entries' references
// equal the units live sequences share, and cached blocks are accounted.
func (m *Manager) checkPrefix(live []Alloc) (cachedBlocks int, err error) {
	c := m.prefix
	if c == nil {
		for _, a := range live {
			if a.SharedUnits != 0 {
				return 0, fmt.Errorf("kvcache: a sequence shares prefix units with caching off")
			}
		}
		return 0, nil
	}
	refs, ev := 0, 0
	for i := range c.entries {
		e := &c.entries[i]
		if e.blocks == 0 {
			continue
		}
		cachedBlocks += e.blocks
		refs += e.refs
		if e.refs == 0 {
			ev += e.blocks
		}
	}
	shared := 0
	for _, a := range live {
		shared += a.SharedUnits
	}
	if refs != shared {
		return 0, fmt.Errorf("kvcache: cache entries hold %d references, live sequences share %d units", refs, shared)
	}
	if ev != c.evictable {
		return 0, fmt.Errorf("kvcache: %d evictable blocks counted, %d found", c.evictable, ev)
	}
	return cachedBlocks, nil
}
