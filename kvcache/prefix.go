package kvcache

import "fmt"

// Automatic prefix caching as vLLM V1 does it: every full block a sequence
// computes — prompt and generated tokens — is registered in the cache under
// its content id (see Content). A sequence's leading cached blocks are
// shared, reference-counted, between every sequence whose content starts
// the same; when no sequence references a block it stays cached but
// evictable, and blocks are evicted least recently freed first when a
// sequence needs blocks and none are free (a freed sequence's tail blocks
// before its head, as vLLM frees them in reverse). A sequence that starts —
// a new request, or a preempted one recomputed — first takes the leading
// blocks of its tokens that are still cached.
//
// Lookups run per request start (one index probe per cached block found)
// and registration per completed block (one probe per 16 tokens by
// default), never per token of a step that completes no block; the index
// (index.go) is a fixed table that allocates nothing while a run goes on.
//
// Private blocks (Content.Own: a request's own prompt and output, which
// no other request can hit) are cached and evicted in the same order as
// every other block, but kept out of the index: a sequence holding one
// marks it privateBlock in its block table, with no entry; releasing it to
// restart gives it an entry (not indexed) that the restart finds through
// Alloc.past; a finished sequence's private blocks go on the eviction list
// as dead places, which an eviction frees without reading anything. Most
// blocks of a chat workload are private, and the index and entries (two
// cache misses per block in a large cache) are then touched only by the
// blocks requests share. Without offload tiers only: a tier is indexed
// by id, and every block evicted goes to it.

type entry struct {
	id   uint64
	pos  int32 // its place on the eviction list (ring); notListed, or unused (a spare entry)
	refs int32
}

// entry.pos of a cached entry off the eviction list (referenced), and of
// an entry that caches nothing: places are never negative.
const (
	notListed = -1
	unused    = -2
)

// privateBlock stands for an entry where there is none: in a block table,
// a private block the sequence holds; on the eviction list, a finished
// sequence's private block (a dead place, always still listed).
const privateBlock int32 = -1

func (e *entry) used() bool { return e.pos != unused }

type prefixCache struct {
	entries []entry
	spare   []int32 // indexes of unused entries
	index   index
	// The eviction list, least recently freed first, as a ring of entry
	// indexes at places [head, tail): an entry taken off the list keeps
	// its old place, which its pos no longer names (first skips it).
	ring       []int32
	head, tail int32
	evictable  int // unreferenced cached blocks
	refs       int // references held, Σ over entries and private blocks
	// Private blocks cached: held or dead without an entry (marked
	// privateBlock), and with an entry that is not indexed, whose bit is
	// set in private (one per entry: an eviction reads it, not the index).
	marked, privEntries int
	private             []uint64

	QueriedTokens int64 // tokens looked up
	HitTokens     int64 // of which found in the cache
	Evictions     int64 // blocks evicted
}

// EnablePrefixCaching turns prefix caching on for the manager.
func (m *Manager) EnablePrefixCaching() {
	m.prefixOn = true
	if m.prefix == nil {
		m.prefix = &prefixCache{index: newIndex(m.total), private: make([]uint64, (m.total+63)/64),
			entries: make([]entry, 0, m.total), spare: make([]int32, 0, m.total)}
	}
}

// PrefixCaching reports whether prefix caching is on.
func (m *Manager) PrefixCaching() bool { return m.prefixOn }

// PrefixStats returns the tokens looked up in the prefix cache, the tokens
// found, and the blocks evicted so far.
func (m *Manager) PrefixStats() (queried, hits, evictions int64) {
	if m.prefix == nil {
		return 0, 0, 0
	}
	return m.prefix.QueriedTokens, m.prefix.HitTokens, m.prefix.Evictions
}

// Cached is the number of GPU blocks the prefix cache holds, referenced or not.
func (m *Manager) Cached() int {
	if m.prefix == nil {
		return 0
	}
	return m.prefix.cached()
}

func (c *prefixCache) cached() int { return c.index.n + c.marked + c.privEntries }

// unlink takes entry i off the eviction list.
func (c *prefixCache) unlink(i int32) { c.entries[i].pos = notListed }

// pushTail puts entry i at the end of the eviction list.
func (c *prefixCache) pushTail(i int32) { c.entries[i].pos = c.push(i) }

// pushDead puts a finished sequence's private block at the end of the
// eviction list.
func (c *prefixCache) pushDead() { c.push(privateBlock) }

// push writes i (an entry, or privateBlock) at the ring's tail and returns
// its place.
func (c *prefixCache) push(i int32) int32 {
	if c.tail-c.head == int32(len(c.ring)) || c.tail == maxPlace {
		c.makeRoom()
	}
	c.ring[c.tail&int32(len(c.ring)-1)] = i
	c.tail++
	return c.tail - 1
}

// maxPlace bounds the places, which count up with every listing: at it
// makeRoom packs the ring from place 0 again.
const maxPlace = 1 << 30

// at is the entry at place p of the ring (privateBlock for a dead place)
// and whether it is still there.
func (c *prefixCache) at(p int32) (int32, bool) {
	i := c.ring[p&int32(len(c.ring)-1)]
	return i, i == privateBlock || c.entries[i].pos == p
}

// first is the entry evicted next (privateBlock for a dead place) and
// false when the list is empty; it drops the places of entries taken off
// the list before it.
func (c *prefixCache) first() (int32, bool) {
	for ; c.head < c.tail; c.head++ {
		if i, ok := c.at(c.head); ok {
			return i, true
		}
	}
	return 0, false
}

// any reports whether the eviction list holds a block.
func (c *prefixCache) any() bool {
	_, ok := c.first()
	return ok
}

// listed calls fn for every entry on the eviction list, in order.
func (c *prefixCache) listed(fn func(i int32)) {
	for p := c.head; p < c.tail; p++ {
		if i, ok := c.at(p); ok {
			fn(i)
		}
	}
}

// makeRoom makes room on a full ring, or one whose places reached
// maxPlace: it packs the entries still listed to the front, in order,
// renumbering their places from below the ring's length, into a ring twice
// as long when they fill more than half of it. The ring holds at most
// twice the entries ever listed at once, so it grows only while the cache
// fills.
func (c *prefixCache) makeRoom() {
	live := 0
	c.listed(func(int32) { live++ })
	ring, base := c.ring, c.head&int32(len(c.ring)-1)
	if 2*live >= len(ring) {
		ring, base = make([]int32, max(16, 2*len(c.ring))), 0
	}
	// In place, the places base.. keep the slots head..: the slot written
	// for the w-th listed entry is one already read (w ≤ p-head), and no
	// renumbered place is one still to be read (base+w ≤ p).
	w := base
	for p := c.head; p < c.tail; p++ {
		if i, ok := c.at(p); ok {
			ring[w&int32(len(ring)-1)] = i
			if i != privateBlock {
				c.entries[i].pos = w
			}
			w++
		}
	}
	c.ring, c.head, c.tail = ring, base, w
}

// insert records block id with refs references in a spare entry (or a new
// one) and indexes it; an unreferenced block is put on the eviction list.
func (c *prefixCache) insert(id uint64, refs int) int32 {
	i := c.newEntry(id, refs)
	c.index.put(id, i)
	if refs == 0 {
		c.pushTail(i)
	}
	return i
}

// newEntry records block id with refs references in a spare entry (or a
// new one), neither indexed nor listed.
func (c *prefixCache) newEntry(id uint64, refs int) int32 {
	var i int32
	if n := len(c.spare); n > 0 {
		i = c.spare[n-1]
		c.spare = c.spare[:n-1]
	} else {
		c.entries = append(c.entries, entry{pos: unused})
		i = int32(len(c.entries) - 1)
	}
	c.entries[i] = entry{id: id, refs: int32(refs), pos: notListed}
	return i
}

// isPrivate reports whether entry i is a private block's (not indexed).
func (c *prefixCache) isPrivate(i int32) bool { return c.private[i>>6]&(1<<(i&63)) != 0 }

// setPrivate marks entry i as a private block's, or not.
func (c *prefixCache) setPrivate(i int32, on bool) {
	if on {
		c.private[i>>6] |= 1 << (i & 63)
	} else {
		c.private[i>>6] &^= 1 << (i & 63)
	}
}

// past reports whether block id (private, block j of a) is still cached
// at the entry a had for it when it last released it, and returns that
// entry.
func (c *prefixCache) past(a *Alloc, j int, id uint64) (int32, bool) {
	if j >= int(a.past) {
		return 0, false
	}
	i := a.shared[:a.past][j]
	return i, i >= 0 && c.entries[i].used() && c.entries[i].id == id && c.isPrivate(i)
}

// ref takes a reference to entry i, taking it off the eviction list.
func (c *prefixCache) ref(i int32) {
	c.refs++
	e := &c.entries[i]
	if e.refs == 0 {
		c.unlink(i)
		c.evictable--
	}
	e.refs++
}

// AcquirePrefix references the leading blocks of content that are cached,
// up to limit tokens (at least the last token must still be computed to
// sample), and returns the tokens they hold: the sequence computes from
// there. The caller reports a lookup that stuck with CountPrefixLookup.
func (m *Manager) AcquirePrefix(a *Alloc, content *Content, limit int) int {
	c := m.prefix
	if !m.prefixOn || a.SharedBlocks != 0 || a.Blocks != 0 {
		return 0
	}
	m.acqTier = [MaxTiers]int{}
	for (a.SharedBlocks+1)*m.blockSize <= limit {
		id, private := content.name(a.SharedBlocks, m.blockSize)
		if private && len(m.tiers) == 0 {
			i, ok := c.past(a, a.SharedBlocks, id)
			if !ok {
				break
			}
			c.ref(i)
			a.shared = append(a.shared, i)
			a.SharedBlocks++
			continue
		}
		i, ok := c.index.get(id, c.entries)
		if !ok {
			// A block an offload tier holds is loaded back, referenced.
			if len(m.tiers) == 0 {
				break
			}
			if i, ok = m.loadFromTier(id); !ok {
				break
			}
		} else {
			c.ref(i)
		}
		a.shared = append(a.shared, i)
		a.SharedBlocks++
	}
	return a.SharedBlocks * m.blockSize
}

// CountPrefixLookup records a lookup of queried tokens of which hit were
// found in the cache (vLLM's prefix cache hit rate counts them).
func (m *Manager) CountPrefixLookup(queried, hit int) {
	if c := m.prefix; c != nil && m.prefixOn {
		c.QueriedTokens += int64(queried)
		c.HitTokens += int64(hit)
		for t := range m.tiers {
			m.tiers[t].hits += int64(m.acqTier[t] * m.blockSize)
		}
	}
}

// RegisterPrefix caches every full block of the first computed tokens
// beyond those the sequence already shares, moving each from the
// sequence's private blocks to the cache (or, when another sequence cached
// the same content meanwhile, dropping the private copy and sharing that
// one). It does nothing, cheaply, when no block has filled since the last call.
//
// It is called for every sequence of every step, and one step in sixteen
// (the default block size) fills a block: the check is small enough to be
// inlined into the caller, and the loop is a call of its own.
func (m *Manager) RegisterPrefix(a *Alloc, content *Content, computed int) {
	if m.prefixOn && (a.SharedBlocks+1)*m.blockSize <= computed && a.Blocks > 0 { // Registers, written out: inlined, the check costs no call
		m.registerPrefix(a, content, computed)
	}
}

// Registers reports whether RegisterPrefix(a, ·, computed) would register
// a block: whether a block of a's has filled since its last call.
func (m *Manager) Registers(a *Alloc, computed int) bool {
	return m.prefixOn && (a.SharedBlocks+1)*m.blockSize <= computed && a.Blocks > 0
}

func (m *Manager) registerPrefix(a *Alloc, content *Content, computed int) {
	c := m.prefix
	for (a.SharedBlocks+1)*m.blockSize <= computed && a.Blocks > 0 {
		j := a.SharedBlocks
		a.Blocks--
		// From privFrom on a block is private without reading the content;
		// its id is needed only to check an entry a restart may find.
		var id uint64
		private := len(m.tiers) == 0 && j >= a.privateFrom(content, m.blockSize)
		if !private || j < int(a.past) {
			id, private = content.name(j, m.blockSize)
			private = private && len(m.tiers) == 0
		}
		// A private block is found only where a restart left it, a shared
		// one through the index.
		var i int32
		var ok bool
		if private {
			i, ok = c.past(a, j, id)
		} else {
			i, ok = c.index.get(id, c.entries)
		}
		switch {
		case ok:
			c.ref(i)
			m.free++ // the private copy is dropped
		case private: // held without an entry
			i = privateBlock
			c.refs++
			c.marked++
		default:
			i = c.insert(id, 1)
			c.refs++
			if len(m.tiers) > 0 {
				m.forget(id) // computed again: the GPU copy replaces a tier's
			}
		}
		a.shared = append(a.shared, i)
		a.SharedBlocks++
	}
}

// ReleasePrefix drops the references of a sequence that will start again
// (preempted, or a start undone) to its cached blocks, last block first,
// so that a freed sequence's tail is evicted before its head.
// Unreferenced blocks stay cached, evictable, and the sequence's restart
// finds them (content is the sequence's, to name its private blocks). A
// sequence that ended calls DropPrefix instead.
func (m *Manager) ReleasePrefix(a *Alloc, content *Content) {
	m.releasePrefix(a, content)
}

// DropPrefix drops the references of a sequence that ended (finished,
// aborted, rejected) to its cached blocks, as ReleasePrefix does; its
// private blocks, which nothing can find again, stay on the eviction list
// as dead places.
func (m *Manager) DropPrefix(a *Alloc) {
	m.releasePrefix(a, nil)
	a.past = 0
}

func (m *Manager) releasePrefix(a *Alloc, content *Content) {
	c := m.prefix
	if c == nil || a.SharedBlocks == 0 {
		return
	}
	if len(a.shared) != a.SharedBlocks {
		panic(fmt.Sprintf("kvcache: a sequence shares %d cached blocks but its block table holds %d", a.SharedBlocks, len(a.shared)))
	}
	for j := a.SharedBlocks - 1; j >= 0; j-- {
		i := a.shared[j]
		if i == privateBlock {
			c.refs--
			c.evictable++
			if content == nil {
				c.pushDead()
				continue
			}
			// Given an entry, so that the restart can find it (Alloc.past).
			id, _ := content.name(j, m.blockSize)
			i = c.newEntry(id, 0)
			c.setPrivate(i, true)
			c.marked--
			c.privEntries++
			c.pushTail(i)
			a.shared[j] = i
			continue
		}
		e := &c.entries[i]
		if e.refs <= 0 || !e.used() {
			panic(fmt.Sprintf("kvcache: releasing cached block %d (entry %d) that is not referenced", j, i))
		}
		e.refs--
		c.refs--
		if e.refs == 0 {
			c.pushTail(i)
			c.evictable++
		}
	}
	if content != nil {
		a.past = max(a.past, int32(a.SharedBlocks))
	}
	a.shared = a.shared[:0]
	a.SharedBlocks = 0
}

// Warm caches the full blocks of the first tokens of content as if a
// sequence had computed them and finished, while free blocks last: an
// earlier run's prompts in a cache that stayed warm. It returns the blocks
// added. Blocks already cached are refreshed (moved to the back of the
// eviction order).
func (m *Manager) Warm(content *Content, tokens int) int {
	if !m.prefixOn {
		return 0
	}
	if content.Own {
		panic("kvcache: warming an Own content, whose blocks no later sequence can find")
	}
	c := m.prefix
	added := 0
	for j := 0; (j+1)*m.blockSize <= tokens; j++ {
		id := content.Block(j, m.blockSize)
		if i, ok := c.index.get(id, c.entries); ok {
			if c.entries[i].refs == 0 {
				c.unlink(i)
				c.pushTail(i)
			}
			continue
		}
		if m.free == 0 {
			m.evict(1)
			if m.free == 0 {
				break
			}
		}
		c.insert(id, 0)
		c.evictable++
		m.free--
		if len(m.tiers) > 0 {
			m.forget(id)
		}
		added++
	}
	return added
}

// evict frees unreferenced cached blocks, least recently freed first,
// until need blocks are free or nothing is left to evict.
func (m *Manager) evict(need int) {
	c := m.prefix
	for c != nil && m.free < need {
		i, ok := c.first()
		if !ok {
			break
		}
		c.evictable--
		m.free++
		c.Evictions++
		if i == privateBlock { // a dead place: nothing to read
			c.marked--
			c.head++
			continue
		}
		e := &c.entries[i]
		if e.refs != 0 {
			panic("kvcache: a referenced block is on the eviction list")
		}
		c.unlink(i)
		id := e.id
		if c.isPrivate(i) { // a private block's entry, not indexed
			c.setPrivate(i, false)
			c.privEntries--
		} else {
			c.index.del(id, c.entries)
		}
		*e = entry{pos: unused}
		c.spare = append(c.spare, i)
		c.head++ // i's place
		if len(m.tiers) > 0 {
			m.demote(0, id)
		}
	}
}

func (m *Manager) evictable() int {
	if m.prefix == nil {
		return 0
	}
	return m.prefix.evictable
}

// fullCheckBlocks bounds the caches Check walks entry by entry.
const fullCheckBlocks = 4096

// checkPrefix verifies the cache's counters: the references held equal
// the blocks live sequences share, every unreferenced block and only those
// are on the eviction list, each shared block is indexed once, and the
// private ones are counted.
func (m *Manager) checkPrefix(live []Alloc) (cachedBlocks int, err error) {
	c := m.prefix
	if c == nil {
		for _, a := range live {
			if a.SharedBlocks != 0 {
				return 0, fmt.Errorf("kvcache: a sequence shares cached blocks with caching off")
			}
		}
		return 0, nil
	}
	shared, held := 0, 0 // held: private blocks without an entry that sequences hold
	for _, a := range live {
		shared += a.SharedBlocks
		if len(a.shared) != a.SharedBlocks {
			return 0, fmt.Errorf("kvcache: a sequence shares %d cached blocks but its block table holds %d", a.SharedBlocks, len(a.shared))
		}
		if int(a.past) > cap(a.shared) {
			return 0, fmt.Errorf("kvcache: a sequence's past block table holds %d places of %d", a.past, cap(a.shared))
		}
		for _, i := range a.shared {
			if i == privateBlock {
				held++
				continue
			}
			if i < 0 || int(i) >= len(c.entries) || !c.entries[i].used() || c.entries[i].refs <= 0 {
				return 0, fmt.Errorf("kvcache: a sequence's block table names entry %d, which is not a referenced cached block", i)
			}
		}
	}
	if c.refs != shared {
		return 0, fmt.Errorf("kvcache: cached blocks hold %d references, live sequences share %d blocks", c.refs, shared)
	}
	if c.marked < held || c.privEntries < 0 {
		return 0, fmt.Errorf("kvcache: %d private blocks marked, %d held, %d with entries", c.marked, held, c.privEntries)
	}
	if c.cached() > fullCheckBlocks {
		// Large caches keep to the counters: tests check after every
		// event, and the full walk below is for the small caches of the
		// property tests.
		return c.cached(), nil
	}
	refs, ev, indexed, private := 0, 0, 0, 0
	for i := range c.entries {
		e := &c.entries[i]
		if !e.used() {
			continue
		}
		switch j, ok := c.index.get(e.id, c.entries); {
		case c.isPrivate(int32(i)) && ok:
			return 0, fmt.Errorf("kvcache: private block %#x is indexed", e.id)
		case c.isPrivate(int32(i)):
			private++
		case !ok || j != int32(i):
			return 0, fmt.Errorf("kvcache: cached block %#x is not indexed at its entry %d", e.id, i)
		default:
			indexed++
		}
		refs += int(e.refs)
		if e.refs == 0 {
			ev++
		}
	}
	if indexed != c.index.n || private != c.privEntries {
		return 0, fmt.Errorf("kvcache: %d cached blocks indexed of %d, %d private entries of %d", indexed, c.index.n, private, c.privEntries)
	}
	listed, dead := 0, 0
	var bad error
	c.listed(func(i int32) {
		listed++
		if i == privateBlock {
			dead++
		} else if c.entries[i].refs != 0 && bad == nil {
			bad = fmt.Errorf("kvcache: referenced block %#x is evictable", c.entries[i].id)
		}
	})
	if bad != nil {
		return 0, bad
	}
	if held+dead != c.marked {
		return 0, fmt.Errorf("kvcache: %d private blocks marked, %d held and %d dead", c.marked, held, dead)
	}
	if refs+held != shared {
		return 0, fmt.Errorf("kvcache: cached blocks hold %d references, live sequences share %d blocks", refs+held, shared)
	}
	if ev+dead != c.evictable || listed != ev+dead {
		return 0, fmt.Errorf("kvcache: %d evictable blocks counted, %d unreferenced, %d listed", c.evictable, ev+dead, listed)
	}
	return indexed + private + held + dead, nil
}
