package router

import (
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

func newFor(t *testing.T, policy string, n int) Router {
	t.Helper()
	c := DefaultConfig()
	c.Policy = policy
	reps := make([]Replica, n)
	for i := range reps {
		reps[i] = Replica{KVTokens: 10000}
	}
	r, err := New(c, reps, seed.Stream(42, "router"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loads(inflight ...int) *State {
	st := &State{Loads: make([]Load, len(inflight))}
	for i, n := range inflight {
		st.Loads[i].InFlight = n
	}
	return st
}

func TestRoundRobinCycles(t *testing.T) {
	r := newFor(t, RoundRobinName, 3)
	var got []int
	for range 7 {
		got = append(got, r.Route(&Request{}, loads(0, 0, 0)).Replica)
	}
	if want := []int{0, 1, 2, 0, 1, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRandomIsSeededAndSpread(t *testing.T) {
	a, b := newFor(t, RandomName, 4), newFor(t, RandomName, 4)
	count := make([]int, 4)
	for range 4000 {
		i, j := a.Route(&Request{}, loads(0, 0, 0, 0)).Replica, b.Route(&Request{}, loads(0, 0, 0, 0)).Replica
		if i != j {
			t.Fatal("two routers with one seed drew differently")
		}
		count[i]++
	}
	for i, n := range count {
		if n < 900 || n > 1100 { // 1000 ± 6σ
			t.Errorf("replica %d drawn %d of 4000 times", i, n)
		}
	}
}

func TestLeastOutstandingTakesTheLowestCount(t *testing.T) {
	r := newFor(t, LeastOutstandingName, 4)
	if got := r.Route(&Request{}, loads(3, 1, 1, 2)).Replica; got != 1 {
		t.Errorf("got replica %d, want 1 (fewest in flight, lowest index)", got)
	}
}

func TestPowerOfTwoNeverPicksTheWorstOfTwo(t *testing.T) {
	r := newFor(t, PowerOfTwoName, 2)
	for range 100 {
		if got := r.Route(&Request{}, loads(5, 1)).Replica; got != 1 {
			t.Fatalf("with two replicas both are sampled; got %d, want the less loaded 1", got)
		}
	}
	r = newFor(t, PowerOfTwoName, 8)
	st := loads(0, 9, 9, 9, 9, 9, 9, 9)
	hits := 0
	for range 2000 {
		if r.Route(&Request{}, st).Replica == 0 {
			hits++
		}
	}
	// Replica 0 wins whenever it is one of the two samples: 2/8 of draws.
	if hits < 400 || hits > 600 {
		t.Errorf("the idle replica won %d of 2000 routings, want about 500", hits)
	}
}

func TestLeastKV(t *testing.T) {
	r := newFor(t, LeastKVName, 3)
	st := loads(0, 5, 0)
	st.Loads[0].KVUtilization, st.Loads[1].KVUtilization, st.Loads[2].KVUtilization = 0.5, 0.2, 0.2
	st.Loads[1].InFlight = 5
	if got := r.Route(&Request{}, st).Replica; got != 2 {
		t.Errorf("got %d, want 2 (lowest utilisation, fewer in flight)", got)
	}
}

func TestVLLMDPOptimisticIncrement(t *testing.T) {
	r := newFor(t, VLLMDPName, 2)
	st := &State{Loads: []Load{{Waiting: 0, Running: 4}, {Waiting: 0, Running: 6}}, Snapshot: 1}
	// Scores 4 and 6: replica 0; then 4·1+4 = 8 against 6: replica 1; then
	// 8 against 4·1+6 = 10: replica 0.
	var got []int
	for range 3 {
		got = append(got, r.Route(&Request{}, st).Replica)
	}
	if want := []int{0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	st.Snapshot++ // a new snapshot drops the increments
	if got := r.Route(&Request{}, st).Replica; got != 0 {
		t.Errorf("after a snapshot: got %d, want 0", got)
	}
}

func TestLLMDFollowsThePrefix(t *testing.T) {
	r := newFor(t, LLMDName, 3)
	shared := []uint64{1, 2, 3, 4}
	first := r.Route(&Request{ID: 1, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, loads(0, 0, 0))
	for id := 2; id < 6; id++ {
		d := r.Route(&Request{ID: id, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, loads(0, 0, 0))
		if d.Replica != first.Replica || d.Reason != ReasonPrefixMatch {
			t.Errorf("request %d: %+v, want replica %d for its cached prefix", id, d, first.Replica)
		}
	}
	// A long queue and a full cache outweigh the prefix: the others score
	// queue 2·1 + kv 2·1 = 4, the cached replica prefix 3 + queue 0 + kv 2·0.1 = 3.2.
	st := loads(0, 0, 0)
	for i := range st.Loads {
		st.Loads[i].Waiting = 10
	}
	st.Loads[first.Replica].Waiting = 50
	st.Loads[first.Replica].KVUtilization = 0.9
	if d := r.Route(&Request{ID: 9, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, st); d.Replica == first.Replica {
		t.Errorf("a replica with 50 waiting against 10 still won on its prefix: %+v", d)
	}
}

func TestSGLangRules(t *testing.T) {
	r := newFor(t, SGLangName, 2)
	shared := []uint64{7, 8, 9, 10}
	a := r.Route(&Request{ID: 1, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, loads(0, 0))
	if a.Reason != ReasonSmallestTree {
		t.Errorf("first request: %+v, want the smallest tree", a)
	}
	b := r.Route(&Request{ID: 2, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, loads(1, 0))
	if b.Replica != a.Replica || b.Reason != ReasonPrefixMatch {
		t.Errorf("same prefix: %+v, want replica %d by prefix match", b, a.Replica)
	}
	st := loads(0, 0)
	st.Loads[a.Replica].InFlight = 200 // 200 − 0 > 64 and 200 > 1.5·0
	if c := r.Route(&Request{ID: 3, PromptTokens: 64, Prefix: shared, PrefixUnit: 16}, st); c.Replica == a.Replica || c.Reason != ReasonImbalance {
		t.Errorf("imbalanced: %+v, want the other replica", c)
	}
}

func TestPrefixIndexEvictsLRU(t *testing.T) {
	x := newPrefixIndex(48) // three 16-token blocks
	x.insert([]uint64{1, 2}, 16, 32)
	x.insert([]uint64{3}, 16, 16)
	x.insert([]uint64{1}, 16, 16) // 1 is now the most recent
	x.insert([]uint64{4}, 16, 16) // evicts 2, the least recent
	if x.match([]uint64{1}, 16, 16) != 16 || x.match([]uint64{2}, 16, 16) != 0 || x.match([]uint64{3, 4}, 16, 32) != 32 {
		t.Errorf("after eviction: 1 %d, 2 %d, 3·4 %d tokens matched", x.match([]uint64{1}, 16, 16), x.match([]uint64{2}, 16, 16), x.match([]uint64{3, 4}, 16, 32))
	}
	if x.size != 48 {
		t.Errorf("size %d tokens, want 48", x.size)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Policy = "nope" }, "cluster.router.policy: unknown router \"nope\"; valid: "},
		{func(c *Config) { c.StalenessMS = -5 }, "cluster.router.staleness_ms"},
		{func(c *Config) { c.StalenessMS = 0.5 }, "at least 1 ms"},
		{func(c *Config) { c.LLMD.PrefixWeight = -1 }, "cluster.router.llm_d.prefix_weight"},
		{func(c *Config) { c.SGLang.CacheThreshold = 2 }, "cluster.router.sglang.cache_threshold"},
		{func(c *Config) { c.SGLang.BalanceRelThreshold = 0.5 }, "cluster.router.sglang.balance_rel_threshold"},
	} {
		c := DefaultConfig()
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func TestStalenessDefaults(t *testing.T) {
	for policy, want := range map[string]float64{VLLMDPName: 100, LLMDName: 50, LeastKVName: 50, RoundRobinName: 0, SGLangName: 0} {
		c := DefaultConfig()
		c.Policy = policy
		if got := c.Staleness(); got != want {
			t.Errorf("%s: staleness %g, want %g", policy, got, want)
		}
	}
}
