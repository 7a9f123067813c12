package workloads

import (
	"math"
	"strings"
	"testing"
)

func TestClassSharesAndLengths(t *testing.T) {
	c := DefaultConfig()
	c.Requests = 40000
	c.Mix = "assistant"
	c.Classes = []Class{{Preset: "code", Share: 0.15, Priority: 3}}
	src, err := New(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	prio := map[string]int{}
	inSum := map[string]float64{}
	for _, r := range Collect(src, 0) {
		count[r.Class]++
		prio[r.Class] = r.Priority
		inSum[r.Class] += float64(r.InputTokens)
	}
	for name, share := range map[string]float64{"chat": 0.6, "rag": 0.25, "code": 0.15} {
		got := float64(count[name]) / float64(c.Requests)
		if se := math.Sqrt(share * (1 - share) / float64(c.Requests)); math.Abs(got-share) > 4*se {
			t.Errorf("class %s: share %.4f, want %.2f ± %.4f", name, got, share, 4*se)
		}
	}
	if prio["code"] != 3 || prio["chat"] != 0 {
		t.Errorf("priorities %v: want code 3 (overridden), chat 0", prio)
	}
	// RAG prompts are long, chat prompts short, as their presets say.
	if rag, chat := inSum["rag"]/float64(count["rag"]), inSum["chat"]/float64(count["chat"]); !(rag > 4*chat) {
		t.Errorf("mean prompt: rag %.0f, chat %.0f; want rag ≫ chat", rag, chat)
	}
}

func TestClassErrors(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Mix = "party" }, `workload.mix: unknown mix "party"`},
		{func(c *Config) { c.Classes = []Class{{Preset: "poetry", Share: 1}} }, `workload.classes[0].preset: unknown class "poetry"`},
		{func(c *Config) { c.Classes = []Class{{Name: "x", Share: 1}} }, "class x needs input_len and output_len"},
		{func(c *Config) { c.Classes = []Class{{Preset: "chat", Share: 0}} }, "needs a share in (0, 1e6]"},
		{func(c *Config) { c.Classes = []Class{{Preset: "chat", Share: 1}, {Preset: "chat", Share: 1}} }, "appears twice"},
		{func(c *Config) { c.Mix = "assistant"; c.Trace = "t.csv" }, "cannot be combined with a trace"},
	} {
		cfg := DefaultConfig()
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestClosedLoopSource: users send only after their previous request ends,
// a think time later; an exhausted loop says so.
func TestClosedLoopSource(t *testing.T) {
	c := DefaultConfig()
	c.Arrival, c.Users, c.ThinkS, c.Requests = ArrivalClosed, 2, 1, 4
	src, err := New(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	l := src.(Reactive)
	var a, b, r Request
	if !l.Next(&a) || !l.Next(&b) {
		t.Fatal("two users should each have a request due")
	}
	if _, due := l.NextAt(); due || l.Next(&r) {
		t.Fatal("a request is due while both users wait for answers")
	}
	l.Done(a.ID, 5e9)
	at, due := l.NextAt()
	if !due || at < 5e9 {
		t.Fatalf("after an end at 5 s the next request is due at %d (%v); want ≥ 5 s", at, due)
	}
	l.Next(&r)
	l.Done(b.ID, 6e9)
	l.Next(&r)
	if _, due := l.NextAt(); due {
		t.Error("a fifth request is due with requests: 4")
	}
	l.Done(2, 7e9)
	l.Done(3, 8e9)
	if !l.Exhausted() {
		t.Error("the loop is not exhausted after its 4 requests ended")
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Users = 0 },
		func(c *Config) { c.Trace = "x.csv" },
		func(c *Config) { c.TimeScale = 2 },
	} {
		cc := c
		bad(&cc)
		if err := cc.Validate(); err == nil {
			t.Errorf("%+v: no error", cc)
		}
	}
}

// A closed-loop user's think time after a request is that request's own
// draw: two policies that end the same two requests in opposite orders
// give each request the same think time after it (with one stream drawn in
// completion order the two would swap), so a policy that reorders
// completions does not reshuffle the think times.
func TestClosedLoopThinkIsPerRequest(t *testing.T) {
	c := DefaultConfig()
	c.Arrival, c.Users, c.ThinkS, c.Requests = ArrivalClosed, 2, 1, 4
	thinks := func(reversed bool) map[int]int64 {
		src, err := New(c, 3)
		if err != nil {
			t.Fatal(err)
		}
		l := src.(*closedLoop)
		var a, b Request
		l.Next(&a)
		l.Next(&b)
		order := []Request{a, b}
		if reversed {
			order = []Request{b, a}
		}
		got := map[int]int64{}
		for k, q := range order {
			u, end := l.active[q.ID], int64(5e9+k*1e9)
			l.Done(q.ID, end)
			for _, w := range l.ready {
				if w.user == u {
					got[q.ID] = w.at - end
				}
			}
		}
		return got
	}
	x, y := thinks(false), thinks(true)
	if len(x) != 2 || x[0] == x[1] {
		t.Fatalf("think times %v; want two different ones", x)
	}
	if x[0] != y[0] || x[1] != y[1] {
		t.Errorf("think times by request: ends in one order %v, in the other %v", x, y)
	}
}

// A class's own slo: keeps its preset's other limits: code's preset
// limits TTFT, TPOT and the largest gap; a class that tightens TTFT keeps
// the other two.
func TestClassSLOMergesPreset(t *testing.T) {
	c := DefaultConfig()
	c.Classes = []Class{{Preset: "code", Share: 1, SLO: ClassSLO{TTFTMS: 80, E2ELMS: 9000}}}
	cls, err := c.ResolveClasses()
	if err != nil {
		t.Fatal(err)
	}
	base := classPresets["code"].c.SLO
	want := ClassSLO{TTFTMS: 80, TPOTMS: base.TPOTMS, E2ELMS: 9000, StreamP99ITLMS: base.StreamP99ITLMS, StreamMaxGapMS: base.StreamMaxGapMS}
	if got := cls[0].SLO; got != want || base.TPOTMS == 0 || base.StreamMaxGapMS == 0 {
		t.Errorf("slo %+v, want %+v (preset %+v)", got, want, base)
	}
}
