package kvcache

import (
	"fmt"
	"math"
)

// Alloc is one sequence's share of the cache: how many GPU blocks it holds
// and how many of its blocks sit in swap space. The caller stores it with the
// sequence; the zero value holds nothing.
type Alloc struct {
	Blocks  int // private GPU blocks held
	Swapped int // blocks held in CPU swap space
	// SharedBlocks are the sequence's leading blocks that it references in
	// the prefix cache (shared with every sequence of the same content).
	SharedBlocks int
	// shared holds the cache entries of the SharedBlocks, in order (vLLM's
	// block table): a release reads them instead of hashing and looking up
	// each block again. A private block (Content.Own) has no entry while a
	// sequence holds it: privateBlock.
	shared []int32
	// past is how many leading places of shared's buffer, beyond its
	// length, still hold the entries the sequence's blocks had when it last
	// released them to be restarted (ReleasePrefix): a restart finds its
	// private blocks there, checked against their ids, as others find
	// shared blocks through the index. A block j is looked up only while
	// len(shared) == j, before the place is written again.
	past int32
	// privFrom, once known, is 1 + the first block from which all of the
	// sequence's blocks are private (Content.privateFrom): those are
	// registered without reading the content or hashing an id. 0: not yet.
	privFrom int32
}

// Recycle returns an empty Alloc that keeps a's block-table buffer, for a
// caller reusing the sequence's slot for another sequence.
func (a *Alloc) Recycle() Alloc { return Alloc{shared: a.shared[:0]} }

// privateFrom is the first block from which all of a's blocks are
// private (content is a's sequence's).
func (a *Alloc) privateFrom(content *Content, bs int) int {
	if a.privFrom == 0 {
		a.privFrom = min(content.privateFrom(bs), math.MaxInt32-1) + 1
	}
	return int(a.privFrom - 1)
}

// Manager hands out GPU blocks and swap blocks. It is a plain value owned by
// one replica; it is not safe for concurrent use.
type Manager struct {
	blockSize int
	total     int // GPU blocks
	free      int
	swapTotal int // CPU swap blocks
	swapFree  int
	prefixOn  bool
	prefix    *prefixCache // nil while prefix caching is off
	tiers     []tier       // offload tiers, top first (tier.go)
	tierLoads [MaxTiers]int
	acqTier   [MaxTiers]int // blocks the last AcquirePrefix loaded from each tier
}

// New returns a manager of total GPU blocks of blockSize tokens and
// swapBlocks CPU swap blocks.
func New(total, blockSize, swapBlocks int) (*Manager, error) {
	if blockSize < 1 {
		return nil, fmt.Errorf("kvcache: block size must be ≥ 1 token, got %d", blockSize)
	}
	if total < 1 {
		return nil, fmt.Errorf("kvcache: the cache needs at least one block, got %d", total)
	}
	if swapBlocks < 0 {
		return nil, fmt.Errorf("kvcache: swap blocks must be ≥ 0, got %d", swapBlocks)
	}
	return &Manager{blockSize: blockSize, total: total, free: total, swapTotal: swapBlocks, swapFree: swapBlocks}, nil
}

// BlockSize is tokens per block.
func (m *Manager) BlockSize() int { return m.blockSize }

// Total is the number of GPU blocks.
func (m *Manager) Total() int { return m.total }

// Free is the number of GPU blocks a sequence can get: unallocated ones and
// cached prefix blocks no sequence references (evicted on demand).
func (m *Manager) Free() int { return m.free + m.evictable() }

// Used is the number of GPU blocks sequences hold.
func (m *Manager) Used() int { return m.total - m.Free() }

// SwapTotal and SwapFree describe CPU swap space in blocks.
func (m *Manager) SwapTotal() int { return m.swapTotal }

// SwapFree is the number of CPU swap blocks a swap-out can get: unused
// ones and, when the CPU tier shares swap space, its cached blocks (moved
// down on demand).
func (m *Manager) SwapFree() int { return m.swapFree + m.tierCached() }

// BlocksFor is the number of blocks that hold tokens tokens.
func (m *Manager) BlocksFor(tokens int) int {
	return (tokens + m.blockSize - 1) / m.blockSize
}

// Need is how many more blocks a must take to hold tokens tokens.
func (m *Manager) Need(a *Alloc, tokens int) int {
	n := m.BlocksFor(tokens) - a.SharedBlocks - a.Blocks
	if n < 0 {
		return 0
	}
	return n
}

// Grow makes a hold enough GPU blocks for tokens tokens. It allocates all
// the blocks needed or none, and reports whether it did.
func (m *Manager) Grow(a *Alloc, tokens int) bool {
	if m.Fits(a, tokens) {
		return true // the blocks held have room: most steps of a decode
	}
	return m.grow(a, tokens)
}

// Fits reports whether the blocks a holds have room for tokens tokens:
// Grow would then change nothing.
func (m *Manager) Fits(a *Alloc, tokens int) bool {
	return tokens <= (a.Blocks+a.SharedBlocks)*m.blockSize
}

func (m *Manager) grow(a *Alloc, tokens int) bool {
	n := m.Need(a, tokens)
	if n > m.free {
		m.evict(n)
		if n > m.free {
			return false
		}
	}
	m.free -= n
	a.Blocks += n
	return true
}

// Shrink frees a's GPU blocks beyond those that hold tokens tokens (the
// slots of rejected speculative tokens).
func (m *Manager) Shrink(a *Alloc, tokens int) {
	keep := max(0, m.BlocksFor(tokens)-a.SharedBlocks)
	if n := a.Blocks - keep; n > 0 {
		a.Blocks = keep
		m.free += n
	}
}

// Release frees every GPU and swap block a holds (a sequence finished, or
// was evicted to be recomputed).
func (m *Manager) Release(a *Alloc) {
	if a.SharedBlocks != 0 {
		panic("kvcache: Release of a sequence that still shares cached blocks (ReleasePrefix first)")
	}
	if a.Blocks < 0 || a.Swapped < 0 || m.free+a.Blocks > m.total || m.swapFree+a.Swapped > m.swapTotal {
		panic(fmt.Sprintf("kvcache: releasing %+v would free more than was allocated (free %d/%d, swap %d/%d)",
			*a, m.free, m.total, m.swapFree, m.swapTotal))
	}
	m.free += a.Blocks
	m.swapFree += a.Swapped
	*a = Alloc{shared: a.shared[:0], past: a.past, privFrom: a.privFrom} // a recomputed sequence finds its private blocks again
}

// SwapOut moves a's GPU blocks to swap space, with copies of cached
// blocks it held (cached, which the caller released from the prefix cache
// first: they stay cached on the GPU, unreferenced), and returns how many
// blocks were copied, or 0 and false when swap space is too small (the
// caller then falls back to recompute). Swapped back in, every block is
// private until the sequence registers it again.
func (m *Manager) SwapOut(a *Alloc, cached int) (int, bool) {
	if a.Swapped != 0 {
		panic("kvcache: swapping out a sequence that is already swapped out")
	}
	if a.SharedBlocks != 0 || cached < 0 {
		panic("kvcache: swapping out a sequence that still shares cached blocks (ReleasePrefix first)")
	}
	n := a.Blocks + cached
	m.makeSwapRoom(n)
	if n > m.swapFree {
		return 0, false
	}
	m.swapFree -= n
	m.free += a.Blocks
	a.Swapped, a.Blocks = n, 0
	return n, true
}

// SwapIn copies a's blocks back to the GPU and returns how many were copied,
// or 0 and false when too few GPU blocks are free.
func (m *Manager) SwapIn(a *Alloc) (int, bool) {
	if a.Blocks != 0 {
		panic("kvcache: swapping in a sequence that holds GPU blocks")
	}
	n := a.Swapped
	if n > m.free {
		m.evict(n)
		if n > m.free {
			return 0, false
		}
	}
	m.free -= n
	m.swapFree += n
	a.Blocks, a.Swapped = n, 0
	return n, true
}

// Utilization is the share of GPU blocks allocated, in [0,1].
func (m *Manager) Utilization() float64 {
	return float64(m.Used()) / float64(m.total)
}

// Check verifies the manager's counters against the allocations the caller
// holds: every block is free or held by exactly one live Alloc. Tests and
// the engine's debug checks call it; it returns an error describing the
// first mismatch.
func (m *Manager) Check(live []Alloc) error {
	gpu, swap := 0, 0
	for _, a := range live {
		if a.Blocks < 0 || a.Swapped < 0 {
			return fmt.Errorf("kvcache: negative allocation %+v", a)
		}
		gpu += a.Blocks
		swap += a.Swapped
	}
	cached, err := m.checkPrefix(live)
	if err != nil {
		return err
	}
	if gpu+cached+m.free != m.total {
		return fmt.Errorf("kvcache: %d blocks held + %d cached + %d free != %d total", gpu, cached, m.free, m.total)
	}
	if tc := m.tierCached(); swap+tc+m.swapFree != m.swapTotal {
		return fmt.Errorf("kvcache: %d swap blocks held + %d cached in the CPU tier + %d free != %d total", swap, tc, m.swapFree, m.swapTotal)
	}
	return m.checkTiers()
}
