package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

const msNS = 1e6

// stream builds a finished stream from gaps in ms, starting at TTFT ms.
func stream(id int, ttft float64, gapsMS ...float64) sim.StreamSummary {
	s := sim.StreamSummary{ID: id, Status: sim.StatusFinished, TTFT: sim.Time(ttft * msNS), Chunks: len(gapsMS) + 1, OutputTokens: len(gapsMS) + 1}
	e := ttft
	var g []float64
	for _, v := range gapsMS {
		e += v
		g = append(g, v*msNS)
	}
	s.E2EL = sim.Time(e * msNS)
	if len(g) > 0 {
		sorted := append([]float64(nil), g...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if sorted[j] < sorted[i] {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		var sum float64
		for _, v := range g {
			sum += v
		}
		s.GapMean = sum / float64(len(g))
		s.GapP50, s.GapP90, s.GapP99 = quantile.Linear(sorted, 0.5), quantile.Linear(sorted, 0.9), quantile.Linear(sorted, 0.99)
		s.GapMax = sim.Time(sorted[len(sorted)-1])
	}
	return s
}

func testResult() *sim.Result {
	r := &sim.Result{Pooled: quantile.NewHistogram(10)}
	for i := range r.Position {
		r.Position[i] = quantile.NewHistogram(6)
	}
	r.Streams = sim.SummariesOf(
		stream(0, 100, 10, 10, 10, 10),  // smooth
		stream(1, 200, 10, 10, 10, 500), // one 500 ms stall: fails θ = 400 ms
		stream(2, 50),                   // a single chunk: no gaps
		sim.StreamSummary{ID: 3, Status: sim.StatusRejected},
	)
	for _, s := range r.Streams.Slice()[:2] {
		_ = s
	}
	for _, g := range []float64{10, 10, 10, 10, 10, 10, 10, 500} {
		r.Pooled.Record(int64(g * msNS))
	}
	r.Requests, r.Finished = 4, 3
	r.Rejected[1] = 1
	r.OutputTokens = 5 + 5 + 1
	r.Duration = 2 * sim.Second
	return r
}

func TestSummarizeDefinitions(t *testing.T) {
	m := sim.DefaultConfig().Metrics
	m.SLO = sim.SLO{TTFTMS: 150}
	s := Summarize(testResult(), m)
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("finished", float64(s.Finished), 3)
	check("rejected", float64(s.Rejected), 1)
	check("single-chunk streams", float64(s.SingleChunkStreams), 1)
	check("streams with gaps", float64(s.StreamsWithGaps), 2)
	// ITL goodput: streams 0 and 2 (single chunk counts as good) of 3 finished.
	check("itl goodput", s.ITLGoodput, 2.0/3)
	// SLO goodput: TTFT ≤ 150 ms for streams 0 and 2, out of 4 arrived.
	check("slo goodput", s.SLOGoodput, 0.5)
	check("slo goodput per s", s.SLOGoodputPerS, 1)
	// Stream 1's gaps 10,10,10,500: numpy p99 = 10 + 0.97·490 = 485.3; jitter = 485.3/10.
	check("max stream p99", s.StreamP99ITL.Max, 485.3)
	check("unstable share", s.UnstableStreamShare, 0.5)
	// TTFT over finished streams 100, 200, 50: mean 116.67, numpy p50 100, p90 180.
	check("ttft mean", s.TTFT.Mean, 350.0/3)
	check("ttft p50", s.TTFT.P50, 100)
	check("ttft p90", s.TTFT.P90, 180)
	// TPOT only for streams with ≥ 2 tokens: (40/4=10, 530/4=132.5).
	check("tpot mean", s.TPOT.Mean, (10+132.5)/2)
	check("pooled max", s.ITLPooled.Max, 500)
	check("output tokens/s", s.OutputTokensPerS, 5.5)
	if s.RejectedByReason["queue-full"] != 1 {
		t.Errorf("rejected by reason %v, want queue-full: 1", s.RejectedByReason)
	}
}

func TestTablesAndJSON(t *testing.T) {
	cfg := sim.DefaultConfig()
	runs := []Run{NewRun("a", nil, cfg, testResult()), NewRun("b", map[string]string{"x": "y"}, cfg, testResult())}
	var tbl, md bytes.Buffer
	if err := WriteSummaryTable(&tbl, runs, FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TTFT", "stream p99 ITL", "ITL goodput (max gap ≤ 400 ms)", "kv-recompute", "66.7%"} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tbl.String())
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(tbl.String()), "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("table line of %d columns exceeds 120: %s", n, line)
		}
	}
	if err := WriteSummaryTable(&md, runs, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "| metric") {
		t.Errorf("markdown table starts %q", md.String()[:20])
	}
	raw, err := json.Marshal(Document{Scenario: cfg, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	run := back["runs"].([]any)[0].(map[string]any)
	streams := run["streams"].([]any)
	if len(streams) != 4 || streams[3].(map[string]any)["status"] != "rejected" {
		t.Errorf("streams %v", streams)
	}
	var csvBuf bytes.Buffer
	if err := WriteStreamsCSV(&csvBuf, runs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(csvBuf.String(), "\n"); n != 1+8 {
		t.Errorf("csv has %d lines, want header + 8", n)
	}
}

// UtilizationOf gives a share above 1 as 1 and says so, with what was
// counted; a share at or below 1 carries no mark, and the table cell and
// the warnings follow.
func TestUtilizationSaysWhenCapped(t *testing.T) {
	w := sim.WorkStats{FLOPs: 3, PeakFLOPs: 2, Bytes: 1, PeakBytes: 2, BusyNS: 5, SpanNS: 10}
	u := UtilizationOf(&w)
	if *u.MFU != 1 || !u.MFUCapped || u.MFUUncapped == nil || *u.MFUUncapped != 1.5 {
		t.Errorf("FLOPs 1.5× the peak: %+v, want mfu 1 capped from 1.5", u)
	}
	if *u.MBU != 0.5 || u.MBUCapped || u.MBUUncapped != nil {
		t.Errorf("bytes half the peak: %+v, want mbu 0.5 uncapped", u)
	}
	s := Summary{Utilization: u}
	if got := utilizationCell(&s); got != "100.0% (capped; counted 150.0%) / 50.0% / 50.0%" {
		t.Errorf("cell %q", got)
	}
	if ws := capWarnings("r", u); len(ws) != 1 || !strings.Contains(ws[0], "MFU counted 150.0%") {
		t.Errorf("warnings %q", ws)
	}
	w.FLOPs = 2 // exactly the peak is not capped
	if u := UtilizationOf(&w); u.MFUCapped || *u.MFU != 1 {
		t.Errorf("FLOPs at the peak: %+v", u)
	}
}
