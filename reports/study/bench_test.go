package study

import (
	"bytes"
	"encoding/json"
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
