package gate

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

// synth builds a sample of n finished streams arriving 100 ms apart, each
// with 40 gaps of about base ms and, every stallEvery-th stream, one gap
// of stall ms.
func synth(name string, n int, seed uint64, base, stall float64, stallEvery int) Sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &sim.Result{Name: name, Measured: &sim.Measured{}}
	for i := range r.Position {
		r.Position[i] = quantile.NewHistogram(6)
	}
	m := sim.DefaultConfig().Metrics
	for i := range n {
		gaps := make([]float64, 40)
		var sum, mx float64
		for j := range gaps {
			gaps[j] = (base + rng.Float64()) * 1e6
			if stallEvery > 0 && i%stallEvery == 0 && j == 20 {
				gaps[j] = stall * 1e6
			}
			sum += gaps[j]
			mx = max(mx, gaps[j])
		}
		ttft := 100e6 + rng.Float64()*10e6
		st := sim.StreamSummary{ID: i, Arrival: sim.Time(i) * 100 * sim.Millisecond, OutputTokens: 41, Chunks: 41,
			TTFT: sim.Time(ttft), E2EL: sim.Time(ttft + sum), GapMax: sim.Time(mx), GapMean: sum / 40}
		// Per-stream percentiles: enough for these tests to use the max.
		st.GapP50, st.GapP90, st.GapP99 = base*1e6, base*1e6, mx
		r.Streams.Append(st)
		r.Measured.Streams = append(r.Measured.Streams, sim.MeasuredStream{TTFT: ttft, E2EL: ttft + sum, GapMax: mx, Gaps: gaps})
		r.Requests++
		r.Finished++
	}
	r.Duration = sim.Time(n) * 100 * sim.Millisecond
	return Sample{Name: name, Result: r, Metrics: m, AllGaps: true}
}

func TestCompareVerdicts(t *testing.T) {
	base := synth("base", 200, 1, 20, 0, 0)
	o := DefaultOptions()
	o.Bootstrap = 400
	o.Metrics = []string{"stream_p99_itl_p99", "itl_goodput", "ttft_mean", "itl_pooled_p50"}
	cases := []struct {
		name string
		cand Sample
		want []string
	}{
		{"noise", synth("noise", 200, 2, 20, 0, 0), []string{Pass, Pass, Pass, Pass}},
		// A pause of 600 ms in a third of the streams: per-stream figures
		// fail, the pooled median does not move.
		{"stalls", synth("stalls", 200, 2, 20, 600, 3), []string{Fail, Fail, Pass, Pass}},
		// Every gap 40 % faster.
		{"faster", synth("faster", 200, 2, 12, 0, 0), []string{Improved, Pass, Pass, Improved}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Compare(base, c.cand, o)
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range rep.Rows[:len(c.want)] {
				if row.Verdict != c.want[i] {
					t.Errorf("%s: %s (change %.4g [%.4g, %.4g]), want %s", row.Metric, row.Verdict, row.Change, row.Low, row.High, c.want[i])
				}
				if row.Low > row.Change || row.Change > row.High {
					t.Errorf("%s: change %.4g outside its interval [%.4g, %.4g]", row.Metric, row.Change, row.Low, row.High)
				}
			}
			if rep.Pass != (c.name != "stalls") {
				t.Errorf("pass %v", rep.Pass)
			}
		})
	}
}

func TestCompareDeterministic(t *testing.T) {
	a, b := synth("a", 100, 1, 20, 0, 0), synth("b", 100, 2, 21, 300, 10)
	o := DefaultOptions()
	o.Metrics = []string{"stream_p99_itl_p99", "ttft_p99", "unstable_stream_share"}
	r1, _ := Compare(a, b, o)
	r2, _ := Compare(a, b, o)
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if string(j1) != string(j2) {
		t.Errorf("same seed, different reports:\n%s\n%s", j1, j2)
	}
	o.Seed = 2
	r3, _ := Compare(a, b, o)
	if r3.Rows[1].Change != r1.Rows[1].Change || r3.Rows[1].Low == r1.Rows[1].Low {
		t.Errorf("another seed: change %v [%v] against %v [%v]; want the same change, another interval", r3.Rows[1].Change, r3.Rows[1].Low, r1.Rows[1].Change, r1.Rows[1].Low)
	}
}

func TestChange(t *testing.T) {
	lat, _ := Lookup("ttft_p99")
	sh, _ := Lookup("itl_goodput")
	cases := []struct {
		m          Metric
		b, c, want float64
	}{
		{lat, 100, 110, 0.1}, {lat, 100, 90, -0.1}, {lat, 0, 0, 0}, {lat, 0, 5, math.Inf(1)},
		{sh, 0.9, 0.85, -0.05}, {sh, 0, 0.2, 0.2},
	}
	for _, c := range cases {
		if got := change(c.m, c.b, c.c); math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("change(%s, %g → %g) = %g, want %g", c.m.Name, c.b, c.c, got, c.want)
		}
	}
	b, _ := json.Marshal(Row{Change: Value(math.Inf(1)), Low: Value(math.NaN())})
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["change"] != nil || back["ci_low"] != nil {
		t.Errorf("infinite values encode as %s", b)
	}
}

func TestBlockLen(t *testing.T) {
	s := synth("s", 100, 1, 20, 0, 0)
	// Each stream lasts about 0.9 s and one arrives every 0.1 s: 9 in flight.
	if got := blockLen(s.Result, 0); got < 8 || got > 10 {
		t.Errorf("automatic block %d, want about 9", got)
	}
	if got := blockLen(s.Result, 1); got != 1 {
		t.Errorf("block 1 gave %d", got)
	}
	if got := blockLen(s.Result, 1000); got != 100 {
		t.Errorf("block beyond the streams gave %d", got)
	}
}

func TestCompareErrors(t *testing.T) {
	a := synth("a", 10, 1, 20, 0, 0)
	noGaps := synth("guidellm", 10, 1, 20, 0, 0)
	noGaps.Result.Measured.NoGaps = true
	rows := synth("doc", 10, 1, 20, 0, 0)
	rows.AllGaps = false
	cases := []struct {
		b, c   Sample
		metric string
		want   string
	}{
		{a, a, "nope", `unknown metric "nope"`},
		{a, noGaps, "stream_p99_itl_p99", "records no gaps"},
		{rows, a, "itl_pooled_p99", "needs a stream file"},
	}
	for _, c := range cases {
		o := DefaultOptions()
		o.Metrics = []string{c.metric}
		if _, err := Compare(c.b, c.c, o); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.metric, err, c.want)
		}
	}
	o := DefaultOptions()
	o.Confidence = 1
	if _, err := Compare(a, a, o); err == nil {
		t.Errorf("confidence 1 accepted")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestCompareBlockAtMostHalf: a block longer than half a side's streams
// leaves fewer than two blocks, so every resample is (nearly) the sample
// and the interval has no width: refused, not reported as certainty.
func TestCompareBlockAtMostHalf(t *testing.T) {
	a, b := synth("a", 100, 1, 20, 0, 0), synth("b", 60, 2, 30, 0, 0)
	for _, c := range []struct {
		block int
		want  string
	}{
		{31, "of the 60 streams of b: with fewer than two blocks"},
		{100, "of the 100 streams of a"},
		{100_000_000, "give at most 50"},
	} {
		o := DefaultOptions()
		o.Block = c.block
		_, err := Compare(a, b, o)
		if err == nil || !contains(err.Error(), "block: ") || !contains(err.Error(), c.want) {
			t.Errorf("block %d: error %v, want %q", c.block, err, c.want)
		}
	}
	o := DefaultOptions()
	o.Block = 30
	rep, err := Compare(a, b, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; !(r.Low < r.High) {
		t.Errorf("block 30: interval [%g, %g] has no width", r.Low, r.High)
	}
	// Without resampling the block is not used.
	o.Block, o.Bootstrap = 1000, 0
	if _, err := Compare(a, b, o); err != nil {
		t.Errorf("block with no bootstrap: %v", err)
	}
}

// TestFromRunRoundTrip: a document's run, rebuilt from its stream rows,
// summarizes to the document's own per-stream figures.
func TestFromRunRoundTrip(t *testing.T) {
	s := synth("x", 50, 3, 20, 500, 7)
	m := s.Metrics
	run := reports.NewRun("x", nil, sim.Config{Metrics: m}, s.Result)
	back, err := FromRun("doc.json", &run)
	if err != nil {
		t.Fatal(err)
	}
	got := reports.Summarize(back.Result, m)
	want := run.Summary
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"stream p99 p99", got.StreamP99ITL.P99, want.StreamP99ITL.P99}, {"max gap p99", got.StreamMaxGap.P99, want.StreamMaxGap.P99},
		{"TTFT p99", got.TTFT.P99, want.TTFT.P99}, {"TPOT p50", got.TPOT.P50, want.TPOT.P50}, {"ITL goodput", got.ITLGoodput, want.ITLGoodput},
		{"stalled share", got.StalledStreamShare, want.StalledStreamShare},
	} {
		if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s: rebuilt %.17g, document %.17g", c.what, c.got, c.want)
		}
	}
}

// FuzzFromRun: any JSON document either fails to load with an error or
// gates against itself without a panic.
func FuzzFromRun(f *testing.F) {
	s := synth("x", 5, 1, 20, 500, 2)
	run := reports.NewRun("x", nil, sim.Config{Metrics: s.Metrics}, s.Result)
	doc, _ := json.Marshal(reports.Document{Runs: []reports.Run{run}})
	f.Add(doc)
	f.Add([]byte(`{"runs":[{"name":"a","summary":{"requests":1,"duration_s":-1},"streams":[{"status":"finished","ttft_ms":5,"e2el_ms":1}]}]}`))
	f.Add([]byte(`{"runs":[{"name":"a","summary":{"failed":3},"streams":[{"status":"rejected","reject_reason":"zzz"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d reports.Document
		if json.Unmarshal(data, &d) != nil {
			return
		}
		for i := range d.Runs {
			smp, err := FromRun("fuzz.json", &d.Runs[i])
			if err != nil {
				continue
			}
			smp.Metrics = sim.DefaultConfig().Metrics
			o := DefaultOptions()
			o.Bootstrap = 5
			o.Metrics = []string{"stream_p99_itl_p99", "itl_goodput", "ttft_p99", "slo_goodput"}
			if smp.Result.Measured.NoGaps {
				o.Metrics = []string{"ttft_p99"}
			}
			if _, err := Compare(smp, smp, o); err != nil {
				t.Fatalf("a loaded run does not gate against itself: %v", err)
			}
		}
	})
}
