package study

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/sim/scenario"
)

// TestSearchConfigsProgress: the progress SearchConfigs reports counts
// configurations finished, never more than there are, ending at all of
// them, and a watched search counts every probe it keeps.
func TestSearchConfigsProgress(t *testing.T) {
	t.Parallel()
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: mustTerms(t, "stream-p99-itl:p99<=150ms")}
	vs := []scenario.Variant{variant(t, small()), variant(t, small())}
	vs[1].Name = "second"
	var mu sync.Mutex
	var seen []int
	var w bytes.Buffer
	line := progress.New(&w, "capacity", progress.Options{Force: true})
	watch := s.Watch(line, len(vs))
	out, err := s.SearchConfigs(vs, nil, 2, func(done, total int) {
		watch(done, total)
		mu.Lock()
		defer mu.Unlock()
		if total != len(vs) || done < 0 || done > total {
			t.Errorf("progress %d/%d with %d configurations", done, total, len(vs))
		}
		seen = append(seen, done)
	})
	line.Done()
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 || seen[len(seen)-1] != 2 {
		t.Errorf("progress calls %v: want one per seed search (4), ending at 2 configurations", seen)
	}
	probes := 0
	for _, cs := range out {
		probes += len(cs.Points)
	}
	if want := s.probes.Load(); int64(probes) != want {
		t.Errorf("%d probes kept, %d counted", probes, want)
	}
	if !strings.HasPrefix(w.String(), "\r\033[Kcapacity: 0/2 configurations (0%), 0 probes") {
		t.Errorf("line: %q", w.String())
	}
}
