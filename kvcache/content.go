package kvcache

import "math"

// Content names what a sequence's tokens are, so that every full KV block
// has a content identity: two blocks with the same id hold the same tokens
// after the same prefix, as vLLM V1's block hashes (a hash of the block's
// tokens chained with its parent's) say. The ids are computed from a few
// keys, never stored per block, so a sequence carries no per-token state.
//
// Block j (tokens [j·B, (j+1)·B) for block size B) is named, in order of
// preference, by:
//   - Units, when the block lies inside the prompt and inside one unit
//     (Mooncake's hash_ids, 512 tokens each, or itlsim's prefix_blocks):
//     unit ids already identify their content with everything before it;
//   - SharedKey, when the block ends within the first SharedTokens tokens
//     (a shared system prompt or document);
//   - Key, when the block lies inside the prompt (the request's own
//     prompt; a conversation's whole history when turns share it);
//   - OutKey otherwise: blocks holding generated tokens.
//
// A key must identify everything before the tokens it names (a unique key
// per request does trivially), since a block id stands for its whole
// prefix. Callers always set Key: sequences of equal Key share content (the
// engine gives a request without one its own seed).
//
// Own says that Key and OutKey belong to this sequence alone, for the
// manager's whole life (the engine's seed key of a request without a
// content key): the blocks they name are private. No other sequence can
// hit them, and the sequence itself only on a restart (a recompute, a swap
// back in), so the manager finds them through the sequence's own block
// table instead of its shared index (see privateBlock). Results are the
// same either way.
type Content struct {
	Units        []uint64 // explicit prefix unit ids, read only
	UnitTokens   int      // tokens per unit; 0 without units
	Prompt       int      // prompt tokens: units and Key name only prompt blocks
	SharedKey    uint64
	SharedTokens int
	Key          uint64
	OutKey       uint64 // 0: Key (a conversation's answers are its next prompt)
	Own          bool
}

// mix is SplitMix64's output function, a bijection that spreads keys.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Salts keep the id families apart: a unit id, a shared key and a
// request key that happen to be equal still name different blocks.
const (
	saltUnit   = 0x756e6974 // "unit"
	saltShared = 0x73686172 // "shar"
	saltOwn    = 0x6f776e00 // "own"
	saltOut    = 0x6f757400 // "out"
)

// Block returns the content id of block j for blocks of bs tokens.
func (c *Content) Block(j, bs int) uint64 {
	id, _ := c.name(j, bs)
	return id
}

// privateFrom is the first block from which every block of an Own
// content is private, for blocks of bs tokens: past the shared prefix and
// past the prompt's prefix units. A content that is not Own has none
// (math.MaxInt32).
func (c *Content) privateFrom(bs int) int32 {
	if !c.Own {
		return math.MaxInt32
	}
	from := c.SharedTokens
	if c.UnitTokens > 0 {
		from = max(from, min(c.Prompt, len(c.Units)*c.UnitTokens))
	}
	return int32((from + bs - 1) / bs)
}

// name returns the content id of block j for blocks of bs tokens and
// whether it is private: named by Key or OutKey of an Own content.
func (c *Content) name(j, bs int) (uint64, bool) {
	start, end := j*bs, (j+1)*bs
	if end <= c.Prompt {
		if u := c.UnitTokens; u > 0 {
			if k := start / u; k < len(c.Units) && (end-1)/u == k {
				return mix(mix(c.Units[k]^saltUnit) ^ uint64(start-k*u)), false
			}
		}
		if end <= c.SharedTokens {
			return mix(mix(c.SharedKey^saltShared) ^ uint64(j)), false
		}
		return mix(mix(c.Key^saltOwn) ^ uint64(j)), c.Own
	}
	if end <= c.SharedTokens {
		return mix(mix(c.SharedKey^saltShared) ^ uint64(j)), false
	}
	k := c.OutKey
	if k == 0 {
		k = c.Key
	}
	if k == c.Key {
		// One key for prompt and answer: a conversation, whose next turn's
		// prompt holds this answer at the same positions.
		return mix(mix(k^saltOwn) ^ uint64(j)), c.Own
	}
	return mix(mix(k^saltOut) ^ uint64(j)), c.Own
}

// PromptBlocks appends to dst[:0] the content ids of the ⌈Prompt/bs⌉
// prompt blocks of bs tokens and returns it: the identity a router-side
// prefix index keys on, the same the cache itself uses for full blocks.
// A partial last block is named as a prompt block (by Key or SharedKey),
// so that it never matches a block of generated tokens.
func (c *Content) PromptBlocks(bs int, dst []uint64) []uint64 {
	dst = dst[:0]
	if bs <= 0 {
		return dst
	}
	full := c.Prompt / bs
	for j := range full {
		id, _ := c.name(j, bs)
		dst = append(dst, id)
	}
	if full*bs < c.Prompt {
		j := full
		if (j+1)*bs <= c.SharedTokens {
			dst = append(dst, mix(mix(c.SharedKey^saltShared)^uint64(j)))
		} else {
			dst = append(dst, mix(mix(c.Key^saltOwn)^uint64(j)))
		}
	}
	return dst
}

// CachedPrefix is how many leading prompt tokens of content the cache
// holds now in full blocks, at most tokens: what a KV-event subscriber
// (llm-d's precise prefix-cache scorer) sees of this replica. It reads the
// cache and changes nothing, not even the eviction order.
func (m *Manager) CachedPrefix(content *Content, tokens int) int {
	if !m.prefixOn {
		return 0
	}
	c := m.prefix
	private := content.privateFrom(m.blockSize)
	n := 0
	for j := 0; (j+1)*m.blockSize <= tokens && int32(j) < private; j++ {
		if _, ok := c.index.get(content.Block(j, m.blockSize), c.entries); !ok {
			break
		}
		n++
	}
	return n * m.blockSize
}
