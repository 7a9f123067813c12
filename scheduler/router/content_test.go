package router

import (
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

// namer names blocks as a shared prefix of shared blocks followed by
// blocks unique to the request, like kvcache.Content.
type namer struct {
	group, own uint64
	shared     int // blocks of the group's prefix
}

func (n namer) PromptBlocks(bs int, dst []uint64) []uint64 {
	dst = dst[:0]
	for j := range 8 {
		if j < n.shared {
			dst = append(dst, n.group<<32|uint64(j))
		} else {
			dst = append(dst, n.own<<32|uint64(j))
		}
	}
	return dst
}

// A request without block ids of its own but with content is routed by its
// content: a second request of a group goes where the first went, for
// llm-d and SGLang alike, whatever the replica's turn.
func TestContentRoutesSharedPrefixTogether(t *testing.T) {
	for _, policy := range []string{LLMDName, SGLangName} {
		r := newFor(t, policy, 4)
		first := r.Route(&Request{ID: 1, PromptTokens: 128, Content: namer{group: 7, own: 1, shared: 6}}, loads(0, 0, 0, 0)).Replica
		for id := 2; id < 6; id++ {
			d := r.Route(&Request{ID: id, PromptTokens: 128, Content: namer{group: 7, own: uint64(id), shared: 6}}, loads(0, 0, 0, 0))
			if d.Replica != first || d.Reason != ReasonPrefixMatch {
				t.Errorf("%s: request %d went to %d (%s), want %d (prefix-match) with its group", policy, id, d.Replica, d.Reason, first)
			}
		}
	}
}

// The precise scorer reads Load.CachedTokens and nothing it remembers: a
// replica that reports the prefix wins, and one that stops reporting it
// (evicted) no longer draws the request.
func TestPreciseScorerReadsKVEvents(t *testing.T) {
	c := DefaultConfig()
	c.Policy = LLMDName
	c.LLMD.PrefixScorer = PrefixPrecise
	c.LLMD.KVWeight, c.LLMD.QueueWeight = 0, 0
	if !c.UsesKVEvents() {
		t.Fatal("precise llm-d: UsesKVEvents false")
	}
	r, err := New(c, []Replica{{KVTokens: 1000}, {KVTokens: 1000}, {KVTokens: 1000}}, seed.Stream(42, "router"))
	if err != nil {
		t.Fatal(err)
	}
	st := loads(0, 0, 0)
	st.Loads[2].CachedTokens = 96
	if d := r.Route(&Request{ID: 1, PromptTokens: 128}, st); d.Replica != 2 || d.Reason != ReasonPrefixMatch {
		t.Errorf("got replica %d (%s), want 2 (prefix-match): it holds 96 of 128 tokens", d.Replica, d.Reason)
	}
	st.Loads[2].CachedTokens, st.Loads[0].CachedTokens = 0, 32
	if d := r.Route(&Request{ID: 2, PromptTokens: 128}, st); d.Replica != 0 {
		t.Errorf("got replica %d, want 0, the only one whose cache holds the prefix now", d.Replica)
	}
	c.LLMD.PrefixScorer = "exact"
	if err := c.Validate(); err == nil {
		t.Error("prefix_scorer exact: accepted, want an error naming the field")
	}
}
