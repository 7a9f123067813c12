package workloads

import (
	"strings"
	"testing"
)

// TestConversationTurns: a later turn's prompt is the conversation so far
// (earlier prompt and answer) plus the new message, under the
// conversation's content key; at most Turns turns; seeded and repeatable.
func TestConversationTurns(t *testing.T) {
	c := DefaultConfig()
	c.Requests = 300
	c.Conversation = Conversation{Turns: 3, ThinkS: 0.5}
	src, err := New(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	reqs := Collect(src, 0)
	byKey := map[uint64][]Request{}
	for _, r := range reqs {
		if r.ContentKey == 0 || r.OutputKey != r.ContentKey {
			t.Fatalf("request %d: content key %d, output key %d; want one non-zero key", r.ID, r.ContentKey, r.OutputKey)
		}
		byKey[r.ContentKey] = append(byKey[r.ContentKey], r)
	}
	later := 0
	for _, turns := range byKey {
		if len(turns) > 3 {
			t.Fatalf("a conversation has %d turns, want at most 3", len(turns))
		}
		for k := 1; k < len(turns); k++ {
			later++
			prev, cur := turns[k-1], turns[k]
			if cur.InputTokens <= prev.InputTokens+prev.OutputTokens {
				t.Errorf("turn %d prompt %d tokens, previous prompt + answer %d: want it to hold them and more", k, cur.InputTokens, prev.InputTokens+prev.OutputTokens)
			}
			if cur.Arrival < prev.Arrival {
				t.Errorf("turn %d arrives before the one it follows", k)
			}
		}
	}
	if later == 0 {
		t.Fatal("no conversation had a second turn")
	}
	again, _ := New(c, 7)
	for i, r := range Collect(again, 0) {
		if r.Arrival != reqs[i].Arrival || r.InputTokens != reqs[i].InputTokens || r.ContentKey != reqs[i].ContentKey {
			t.Fatalf("request %d differs between two builds with one seed", i)
		}
	}
}

func TestSharedPrefixGroups(t *testing.T) {
	c := DefaultConfig()
	c.Requests = 200
	c.SharedPrefix = SharedPrefix{Groups: 3, Tokens: 500, Share: 0.5}
	src, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[uint64]bool{}
	with := 0
	for _, r := range Collect(src, 0) {
		if r.SharedTokens == 0 {
			continue
		}
		with++
		keys[r.SharedKey] = true
		if r.SharedTokens != 500 || r.InputTokens <= 500 {
			t.Errorf("request %d: shared %d of %d prompt tokens, want 500 of more", r.ID, r.SharedTokens, r.InputTokens)
		}
	}
	if len(keys) != 3 || with < 70 || with > 130 {
		t.Errorf("%d requests in %d groups, want about 100 in 3", with, len(keys))
	}
	bad := DefaultConfig()
	bad.SharedPrefix = SharedPrefix{Groups: 2}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "shared_prefix.tokens") {
		t.Errorf("groups without tokens: %v", err)
	}
}
