package study

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/sim/scenario"
)

// TestSearchConfigsProgress: the progress SearchConfigs reports counts
// seed searches finished, never more than planned, ending at all of them
// (with Sensitivity, three per configuration and seed), and a watched
// search counts every probe it keeps.
func TestSearchConfigsProgress(t *testing.T) {
	t.Parallel()
	s := &Search{Window: DefaultWindow(), Tolerance: 0.02, Seeds: []uint64{1, 2}, Terms: mustTerms(t, "stream-p99-itl:p99<=150ms")}
	vs := []scenario.Variant{variant(t, small()), variant(t, small())}
	vs[1].Name = "second"
	var mu sync.Mutex
	var seen []int
	var w bytes.Buffer
	line := progress.New(&w, "capacity", progress.Options{Force: true})
	watch := s.Watch(line, "searches")
	out, err := s.SearchConfigs(vs, nil, 2, func(done, total int) {
		watch(done, total)
		mu.Lock()
		defer mu.Unlock()
		if total != 4 || done < 0 || done > total {
			t.Errorf("progress %d/%d with 2 configurations of 2 seeds", done, total)
		}
		seen = append(seen, done)
	})
	line.Done()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4}) {
		t.Errorf("progress calls %v: want the total first, then one per seed search, ending at 4", seen)
	}
	probes := 0
	for _, cs := range out {
		probes += len(cs.Points)
	}
	if want := s.probes.Load(); int64(probes) != want {
		t.Errorf("%d probes kept, %d counted", probes, want)
	}
	if !strings.HasPrefix(w.String(), "\r\033[Kcapacity: 0/4 searches (0%), 0 probes") {
		t.Errorf("line: %q", w.String())
	}
}

// With Sensitivity each seed search is followed by two more (step time
// faster and slower): the total counts all three from the start, and the
// count never passes it.
func TestSearchConfigsProgressWithSensitivity(t *testing.T) {
	t.Parallel()
	s := &Search{Window: DefaultWindow(), Tolerance: 0.05, Seeds: []uint64{1}, Terms: mustTerms(t, "stream-p99-itl:p99<=150ms"), Sensitivity: true}
	var seen []int
	_, err := s.SearchConfigs([]scenario.Variant{variant(t, small())}, nil, 1, func(done, total int) {
		if total != 3 {
			t.Errorf("progress %d/%d: want a total of 3 searches", done, total)
		}
		seen = append(seen, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{0, 1, 2, 3}) {
		t.Errorf("progress calls %v: want 0, then each of the 3 searches", seen)
	}
}
