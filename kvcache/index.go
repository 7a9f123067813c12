package kvcache

// index maps content ids to cache entries: open addressing with linear
// probing over a power-of-two table at most half full, and backward-shift
// deletion, so that it never allocates after it is built and never
// accumulates tombstones (a Go map churned by evictions rehashes and
// allocates as a run goes on). Ids are SplitMix64 outputs, uniformly
// spread, so the low bits serve as the hash. A slot holds the id's low 32
// bits beside the entry, so a probe reads the entry only when those bits
// match, and a deletion finds each slot's home without reading entries:
// one cache miss per lookup in a table of thousands of blocks, not two or
// three.
type index struct {
	slots []uint64 // low 32 bits of the id << 32 | entry index + 1; 0 is empty
	mask  uint64
	n     int
}

func slotOf(id uint64, e int32) uint64 { return uint64(uint32(id))<<32 | uint64(uint32(e+1)) }

// slotEntry is the entry a non-empty slot holds.
func slotEntry(s uint64) int32 { return int32(uint32(s)) - 1 }

func newIndex(capacity int) index {
	size := 16
	for size < 2*capacity {
		size *= 2
	}
	return index{slots: make([]uint64, size), mask: uint64(size - 1)}
}

// get returns the entry of id.
func (x *index) get(id uint64, entries []entry) (int32, bool) {
	tag := uint32(id)
	for i := id & x.mask; ; i = (i + 1) & x.mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == tag {
			if e := slotEntry(s); entries[e].id == id {
				return e, true
			}
		}
	}
}

// put indexes entry e under id, which must not be indexed.
func (x *index) put(id uint64, e int32) {
	if 2*(x.n+1) > len(x.slots) {
		panic("kvcache: the cache index is over half full (more cached blocks than GPU blocks)")
	}
	i := id & x.mask
	for x.slots[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.slots[i] = slotOf(id, e)
	x.n++
}

// del removes id, shifting later entries of its probe run back so that
// every lookup still finds them.
func (x *index) del(id uint64, entries []entry) {
	i := id & x.mask
	tag := uint32(id)
	for {
		s := x.slots[i]
		if s == 0 {
			panic("kvcache: removing a block id that is not indexed")
		}
		if uint32(s>>32) == tag && entries[slotEntry(s)].id == id {
			break
		}
		i = (i + 1) & x.mask
	}
	for j := (i + 1) & x.mask; x.slots[j] != 0; j = (j + 1) & x.mask {
		home := (x.slots[j] >> 32) & x.mask // the table has under 2^32 slots
		// Move slot j into the hole at i when its home is not in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = 0
	x.n--
}
