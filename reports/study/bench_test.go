package study

import (
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
