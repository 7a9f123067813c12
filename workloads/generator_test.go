package workloads

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustNew(t testing.TB, c Config, seed uint64) Source {
	t.Helper()
	s, err := New(c, seed)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestDeterministic(t *testing.T) {
	c := DefaultConfig()
	a := Collect(mustNew(t, c, 42), 0)
	b := Collect(mustNew(t, c, 42), 0)
	if len(a) != c.Requests {
		t.Fatalf("got %d requests, want %d", len(a), c.Requests)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same config and seed gave different requests")
	}
	other := Collect(mustNew(t, c, 43), 0)
	if reflect.DeepEqual(a, other) {
		t.Fatal("seeds 42 and 43 gave the same requests")
	}
}

func TestRequestInvariants(t *testing.T) {
	c := DefaultConfig()
	var prev int64
	for i, r := range Collect(mustNew(t, c, 7), 0) {
		if r.ID != i {
			t.Fatalf("request %d has ID %d", i, r.ID)
		}
		if r.Arrival < prev {
			t.Fatalf("request %d arrives at %d, before %d", i, r.Arrival, prev)
		}
		if i == 0 && r.Arrival != 0 {
			t.Fatalf("first request arrives at %d, want 0", r.Arrival)
		}
		prev = r.Arrival
		if r.InputTokens < c.InputLen.Min() || r.InputTokens > c.InputLen.Max() ||
			r.OutputTokens < c.OutputLen.Min() || r.OutputTokens > c.OutputLen.Max() {
			t.Fatalf("request %d lengths %d, %d outside the distributions' bounds", i, r.InputTokens, r.OutputTokens)
		}
		if r.Priority != 0 {
			t.Fatalf("request %d priority %d, want 0", i, r.Priority)
		}
	}
}

// TestStreamsIndependent checks that lengths, arrivals and per-request seeds
// do not shift one another: changing how one is drawn leaves the others
// exactly as they were.
func TestStreamsIndependent(t *testing.T) {
	base := DefaultConfig()
	otherLengths := base
	otherLengths.InputLen = MustParseDist("uniform:1,100")
	otherLengths.OutputLen = MustParseDist("fixed:3") // draws nothing
	otherArrivals := base
	otherArrivals.Rate = 2.5
	constant := base
	constant.Arrival = ArrivalConstant

	const seed = 99
	a := Collect(mustNew(t, base, seed), 0)
	l := Collect(mustNew(t, otherLengths, seed), 0)
	r := Collect(mustNew(t, otherArrivals, seed), 0)
	k := Collect(mustNew(t, constant, seed), 0)
	for i := range a {
		if a[i].Arrival != l[i].Arrival {
			t.Fatalf("request %d: changing lengths moved the arrival from %d to %d", i, a[i].Arrival, l[i].Arrival)
		}
		if a[i].InputTokens != r[i].InputTokens || a[i].OutputTokens != r[i].OutputTokens ||
			a[i].InputTokens != k[i].InputTokens || a[i].OutputTokens != k[i].OutputTokens {
			t.Fatalf("request %d: changing arrivals changed the lengths", i)
		}
		want := RequestSeed(seed, i)
		if a[i].Seed != want || l[i].Seed != want || r[i].Seed != want || k[i].Seed != want {
			t.Fatalf("request %d: seeds %x %x %x %x, want %x for all", i, a[i].Seed, l[i].Seed, r[i].Seed, k[i].Seed, want)
		}
	}
	seen := make(map[uint64]bool, len(a))
	for _, req := range a {
		if seen[req.Seed] {
			t.Fatalf("request seed %x repeats", req.Seed)
		}
		seen[req.Seed] = true
	}
}

// TestPoissonGaps checks the inter-arrival gaps of a Poisson workload: mean
// 1/rate and coefficient of variation 1, as exponential gaps have.
func TestPoissonGaps(t *testing.T) {
	const n, rate = 100_001, 25.0
	c := DefaultConfig()
	c.Rate, c.Requests = rate, n
	reqs := Collect(mustNew(t, c, 1), 0)
	var sum, sumSq float64
	for i := 1; i < len(reqs); i++ {
		gap := float64(reqs[i].Arrival-reqs[i-1].Arrival) / 1e9
		sum += gap
		sumSq += gap * gap
	}
	gaps := float64(len(reqs) - 1)
	mean := sum / gaps
	cv := math.Sqrt(sumSq/gaps-mean*mean) / mean
	if want := 1 / rate; math.Abs(mean-want)/want > 0.02 {
		t.Errorf("mean gap %.5f s, want %.5f s ± 2%%", mean, want)
	}
	if math.Abs(cv-1) > 0.02 {
		t.Errorf("gap CV %.4f, want 1 ± 0.02", cv)
	}
}

func TestConstantArrivals(t *testing.T) {
	c := DefaultConfig()
	c.Arrival, c.Rate, c.Requests = ArrivalConstant, 3, 10 // a gap of 333,333,333.3 ns
	for i, r := range Collect(mustNew(t, c, 1), 0) {
		if want := int64(math.Round(float64(i) * 1e9 / 3)); r.Arrival != want {
			t.Errorf("request %d arrives at %d, want %d", i, r.Arrival, want)
		}
	}
}

func TestDurationBound(t *testing.T) {
	c := DefaultConfig()
	c.Arrival, c.Rate, c.Requests, c.DurationS = ArrivalConstant, 10, 0, 2
	s := mustNew(t, c, 1)
	reqs := Collect(s, 0)
	if len(reqs) != 20 { // arrivals at 0, 0.1, ..., 1.9 s; 2.0 s is outside
		t.Errorf("got %d requests over 2 s at 10/s, want 20", len(reqs))
	}
	var r Request
	if s.Next(&r) {
		t.Error("Next after exhaustion returned true")
	}

	c.Arrival, c.DurationS = ArrivalPoisson, 1000
	reqs = Collect(mustNew(t, c, 1), 0)
	// 10,000 expected, standard deviation 100.
	if n := len(reqs); n < 9600 || n > 10400 {
		t.Errorf("got %d Poisson requests over 1000 s at 10/s, want about 10000", n)
	}
	if last := reqs[len(reqs)-1].Arrival; last >= 1000e9 {
		t.Errorf("last arrival %d ns is not before the 1000 s horizon", last)
	}
}

func TestCollectLimit(t *testing.T) {
	if got := len(Collect(mustNew(t, DefaultConfig(), 1), 5)); got != 5 {
		t.Errorf("Collect(s, 5) returned %d requests", got)
	}
}

func TestNewRejectsInvalid(t *testing.T) {
	c := DefaultConfig()
	c.Rate = -3
	if _, err := New(c, 1); err == nil || err.Error() != "workload.rate: must be > 0 and finite (requests per second), got -3" {
		t.Errorf("New(rate -3) error = %v", err)
	}
	c = DefaultConfig()
	c.LengthsFile = filepath.Join(t.TempDir(), "missing.csv")
	if _, err := New(c, 1); err == nil || !strings.HasPrefix(err.Error(), "workload.lengths_file: open ") {
		t.Errorf("New(missing lengths file) error = %v", err)
	}
}

func TestNewWithLengthsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pairs.csv")
	csv := "num_prefill_tokens,num_decode_tokens\n10,1\n20,2\n30,3\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.LengthsFile, c.Requests = path, 3000
	counts := map[[2]int]int{}
	for _, r := range Collect(mustNew(t, c, 5), 0) {
		counts[[2]int{r.InputTokens, r.OutputTokens}]++
	}
	for _, pair := range [][2]int{{10, 1}, {20, 2}, {30, 3}} {
		// 1000 expected of each, standard deviation 26.
		if n := counts[pair]; n < 880 || n > 1120 {
			t.Errorf("pair %v drawn %d times of 3000, want about 1000", pair, n)
		}
	}
	if len(counts) != 3 {
		t.Errorf("drew pairs %v, want only the three rows", counts)
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	for _, arrival := range ArrivalNames() {
		if arrival == ArrivalClosed {
			continue // its Next depends on Done; TestClosedLoopSource covers it
		}
		c := DefaultConfig()
		c.Arrival, c.Requests = arrival, 1_000_000
		if spec := arrivalProcesses()[arrival]; spec.shaped {
			c.CV = 2
		}
		s := mustNew(t, c, 1)
		var r Request
		if allocs := testing.AllocsPerRun(1000, func() { s.Next(&r) }); allocs != 0 {
			t.Errorf("%s: Next allocates %.1f times per call", arrival, allocs)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	c := DefaultConfig()
	c.Requests = 0
	c.DurationS = maxHorizonS // never exhausted within a benchmark
	s := mustNew(b, c, 1)
	var r Request
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&r)
	}
}
