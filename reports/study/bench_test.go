package study

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// BenchmarkCapacitySearch is the capacity command's default search of one
// configuration: the default scenario, seeds 1–3, the README's two SLO
// terms (`itlsim capacity --slo stream-p99-itl:p99<=200ms --slo
// ttft:p99<=1s -j 1`). Run with -benchmem to see what each search
// allocates.
func BenchmarkCapacitySearch(b *testing.B) {
	vs, err := scenario.Expand(sim.DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	terms := mustTerms(b, "stream-p99-itl:p99<=200ms", "ttft:p99<=1s")
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2, 3}, Terms: terms}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SearchConfig(vs[0], nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWarmStartIsTheColdSearch checks that starting a bisection probe at
// the shorter of the run lengths its bracket's ends needed changes no
// answer and no probe on the default scenario and a small one: the runs it
// skips would have been inconclusive and rerun.
func TestWarmStartIsTheColdSearch(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]sim.Config{"default": sim.DefaultConfig(), "small": small()} {
		v := variant(t, cfg)
		terms := mustTerms(t, "stream-p99-itl:p99<=200ms", "ttft:p99<=1s")
		warm := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: terms}
		cold := *warm
		cold.cold = true
		a, err := warm.SearchConfig(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cold.SearchConfig(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: the warm-started search differs from the cold one", name)
		}
		skipped := 0
		for _, p := range a.Points {
			skipped += p.Steady.Extensions
		}
		if skipped == 0 {
			t.Errorf("%s: no probe was extended, so the warm start was not exercised", name)
		}
	}
}

// TestSectionsDrawOnlyWhatTheTermsRead: the sections of a probe's window
// summarised with only the populations the SLO terms read give every
// term the bound the full summaries give, for every kind of term.
func TestSectionsDrawOnlyWhatTheTermsRead(t *testing.T) {
	cfg := small()
	cfg.Workload.Rate = 12
	terms := mustTerms(t, "stream-p99-itl:p99<=150ms", "ttft:p95<=400ms", "tpot:mean<=30ms", "e2el:max<=60s",
		"itl:p99<=120ms", "stream-max-gap:p90<=300ms", "jitter:p99<=6", "tokens-per-s-per-user:p10>=30/s",
		"itl-goodput>=99%@200ms", "itl-goodput>=90%", "slo-goodput>=90%", "unstable<=5%")
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunScored(e, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	some := sectionsFor(terms)
	if len(some.pops) == 0 || len(some.pops) >= 9 {
		t.Fatalf("the terms read populations %v", some.pops)
	}
	all := some
	all.pops = nil
	m, partial := measure(cfg, res, e.ServerResult(), DefaultWindow(), some)
	_, full := measure(cfg, res, e.ServerResult(), DefaultWindow(), all)
	outs := terms.Evaluate(&m)
	a, b := termBounds(terms, outs, partial), termBounds(terms, outs, full)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("bounds from sections drawing %v:\n%s\nfrom full sections:\n%s", some.pops, ja, jb)
	}
	for _, bd := range a {
		if bd.Bound == nil && !strings.HasPrefix(bd.Term, "itl-goodput") && !strings.HasPrefix(bd.Term, "slo-") && !strings.HasPrefix(bd.Term, "unstable") {
			t.Errorf("%s: no bound (%d batches)", bd.Term, bd.Batches)
		}
	}
}
