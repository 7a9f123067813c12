package slo

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in     string
		metric string
		stat   string
		atMost bool
		limit  float64
		theta  float64
	}{
		{"ttft:p95<=200ms", "ttft", "p95", true, 200, 0},
		{" tpot:mean <= 15ms ", "tpot", "mean", true, 15, 0},
		{"e2el:p99<=3s", "e2el", "p99", true, 3000, 0},
		{"itl:p99.9<=250ms", "itl", "p99.9", true, 250, 0},
		{"stream-max-gap:p99<=2s", "stream-max-gap", "p99", true, 2000, 0},
		{"tokens-per-s-per-user:p10>=20/s", "tokens-per-s-per-user", "p10", false, 20, 0},
		{"qoe:mean>=0.95", "qoe", "mean", false, 0.95, 0},
		{"jitter:max<=5", "jitter", "max", true, 5, 0},
		{"itl-goodput>=99%@400ms", "itl-goodput", "", false, 0.99, 400},
		{"slo-goodput>=90%", "slo-goodput", "", false, 0.9, 0},
		{"unstable<=0.05", "unstable", "", true, 0.05, 0},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got.Metric != c.metric || got.Stat != c.stat || got.AtMost != c.atMost || got.Limit != c.limit || got.ThetaMS != c.theta {
			t.Errorf("Parse(%q) = %+v", c.in, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"ttft<=200ms":            "name a statistic",
		"ttft:p95<=200":          "a time needs a unit",
		"ttft:p100<=1s":          "percentile",
		"latency:p95<=1s":        "unknown metric",
		"ttft:p95=200ms":         "expected METRIC:STAT",
		"itl-goodput>=150%":      "share",
		"slo-goodput>=90%@400ms": "only itl-goodput",
		"ttft:p95<=1s@2s":        "belongs to itl-goodput",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error with %q", in, err, want)
		}
	}
}

// summary builds a summary of n finished streams with TTFT i ms and one
// rejected request.
func summary(n int) reports.Summary {
	r := &sim.Result{Requests: n + 1, Finished: n, Duration: sim.Second}
	for i := range n {
		r.Streams.Append(sim.StreamSummary{ID: i, OutputTokens: 11, TTFT: sim.Time(i+1) * sim.Millisecond,
			E2EL: sim.Time(i+101) * sim.Millisecond, Chunks: 11, GapP50: 1e7, GapP99: 1e7, GapMax: sim.Time(i) * sim.Millisecond, Class: -1})
	}
	r.Streams.Append(sim.StreamSummary{ID: n, Status: sim.StatusRejected, Class: -1})
	r.Rejected[1] = 1
	m := sim.DefaultConfig().Metrics
	return reports.Summarize(r, m)
}

func TestEvaluate(t *testing.T) {
	s := summary(100)
	terms, err := ParseAll([]string{"ttft:p95<=200ms", "ttft:p99.9<=50ms", "ttft:min>=1ms", "itl-goodput>=99%@50ms", "slo-goodput>=99.5%"})
	if err != nil {
		t.Fatal(err)
	}
	out := Evaluate(terms, &s)
	wantPass := []bool{true, false, true, false, false}
	for i, o := range out {
		if o.Pass != wantPass[i] || o.Value == nil {
			t.Errorf("%s: pass %v value %v, want pass %v", o.Term, o.Pass, o.Value, wantPass[i])
		}
	}
	// ttft p99.9 of 1..100 ms (numpy linear) is 99.901 ms.
	if v := *out[1].Value; v < 99.9 || v > 99.91 {
		t.Errorf("ttft p99.9 = %v", v)
	}
	// max gaps 0..99 ms: 51 of 100 at most 50 ms.
	if v := *out[3].Value; v != 0.51 {
		t.Errorf("itl-goodput@50ms = %v, want 0.51", v)
	}
	if Pass(out) {
		t.Error("Pass with failing terms")
	}
	if k := Limiting(out); out[k].Term != "ttft:p99.9<=50ms" { // 100 % over its limit, the worst
		t.Errorf("limiting term %q", out[k].Term)
	}
}

// TestUndefinedFails: a term on an empty population fails with a note,
// never reads as 0.
func TestUndefinedFails(t *testing.T) {
	s := summary(0)
	terms, _ := ParseAll([]string{"ttft:p99<=1s", "tpot:mean<=100ms"})
	for _, o := range Evaluate(terms, &s) {
		if o.Pass || o.Value != nil || o.Note == "" {
			t.Errorf("%s on no finished stream: %+v", o.Term, o)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ttft:p95<=200ms", "itl-goodput>=99%@400ms", "qoe:p10>=0.9", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		term, err := Parse(s)
		if err == nil && term.Metric == "" {
			t.Errorf("Parse(%q) accepted a term without a metric", s)
		}
	})
}
