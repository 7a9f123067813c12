package router

// prefixIndex is a router-side approximation of one replica's prefix
// cache: the block ids of the prompts routed to it, evicted least recently
// used once they cover more tokens than the replica's KV cache holds (the
// way llm-d's prefix-cache plugin keeps an LRU of block hashes per server
// and SGLang's router keeps an approximate radix tree per worker with a
// size limit). Lookups are per request, never per token.
type prefixIndex struct {
	capacity int // tokens
	size     int // tokens the index covers
	slot     map[uint64]int32
	nodes    []indexNode
	free     []int32
	head     int32 // most recently used; -1 when empty
	tail     int32 // least recently used
}

type indexNode struct {
	id         uint64
	tokens     int
	prev, next int32
}

func newPrefixIndex(capacityTokens int) *prefixIndex {
	return &prefixIndex{capacity: max(1, capacityTokens), slot: map[uint64]int32{}, head: -1, tail: -1}
}

// match is how many leading ids of prefix the index holds, in tokens
// (unit tokens per id; the request's last block may be partial).
func (x *prefixIndex) match(prefix []uint64, unit, promptTokens int) int {
	n := 0
	for k, id := range prefix {
		if _, ok := x.slot[id]; !ok {
			break
		}
		n = min(promptTokens, (k+1)*unit)
	}
	return n
}

// insert records that the replica now caches prefix: every id becomes the
// most recently used, and the oldest are evicted beyond capacity.
func (x *prefixIndex) insert(prefix []uint64, unit, promptTokens int) {
	for k, id := range prefix {
		tokens := min(unit, promptTokens-k*unit)
		if tokens <= 0 {
			break
		}
		if s, ok := x.slot[id]; ok {
			x.unlink(s)
			x.pushFront(s)
			continue
		}
		var s int32
		if n := len(x.free); n > 0 {
			s = x.free[n-1]
			x.free = x.free[:n-1]
		} else {
			s = int32(len(x.nodes))
			x.nodes = append(x.nodes, indexNode{})
		}
		x.nodes[s] = indexNode{id: id, tokens: tokens}
		x.slot[id] = s
		x.pushFront(s)
		x.size += tokens
	}
	for x.size > x.capacity && x.tail >= 0 && x.tail != x.head {
		s := x.tail
		x.unlink(s)
		x.size -= x.nodes[s].tokens
		delete(x.slot, x.nodes[s].id)
		x.free = append(x.free, s)
	}
}

func (x *prefixIndex) unlink(s int32) {
	n := &x.nodes[s]
	if n.prev >= 0 {
		x.nodes[n.prev].next = n.next
	} else {
		x.head = n.next
	}
	if n.next >= 0 {
		x.nodes[n.next].prev = n.prev
	} else {
		x.tail = n.prev
	}
}

func (x *prefixIndex) pushFront(s int32) {
	n := &x.nodes[s]
	n.prev, n.next = -1, x.head
	if x.head >= 0 {
		x.nodes[x.head].prev = s
	}
	x.head = s
	if x.tail < 0 {
		x.tail = s
	}
}

// blocksOf gives a request's content identity for the index: its prefix
// ids when the workload has them, else its blocks as the KV cache names
// them (Content), else ids of its own unique to the request (its prompt
// is shared with nobody), in units of unit tokens.
func blocksOf(req *Request, unit int, scratch []uint64) ([]uint64, int) {
	if len(req.Prefix) > 0 && req.PrefixUnit > 0 {
		return req.Prefix, req.PrefixUnit
	}
	if req.Content != nil {
		return req.Content.PromptBlocks(unit, scratch), unit
	}
	n := (req.PromptTokens + unit - 1) / unit
	scratch = scratch[:0]
	for k := range n {
		// High bit set: never equal to a trace's ids, which are small.
		scratch = append(scratch, 1<<63|uint64(req.ID)<<20|uint64(k))
	}
	return scratch, unit
}
