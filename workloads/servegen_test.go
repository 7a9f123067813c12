package workloads

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeGenClients(t *testing.T) {
	for _, tt := range []struct {
		name     string
		spanS    float64
		expected float64 // Σ rate × 600 over the active windows
		tol      float64 // relative, for the generated count
		maxIn    int
	}{
		// 14 days of a language model's client; Gamma and Weibull windows.
		{"language_m-large_chunk-0", 1_209_600, 675_387, 0.03, 0},
		// A day of DeepSeek-R1; only the first 6-hour dataset key has lengths
		// for the active windows (the later keys are empty dicts).
		{"reason_deepseek-r1_chunk-0", 86_400, 4_926, 0.08, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			trace := needTrace(t, filepath.Join("servegen", tt.name+"-trace.csv"))
			m, err := ReadServeGen(trace)
			if err != nil {
				t.Fatalf("ReadServeGen: %v", err)
			}
			if m.Span() != tt.spanS {
				t.Errorf("Span() = %g s, want %g", m.Span(), tt.spanS)
			}
			if got := m.ExpectedRequests(); math.Abs(got-tt.expected) > 1 {
				t.Errorf("ExpectedRequests() = %.1f, want %.0f", got, tt.expected)
			}
			// Either file names the client; the format is detected.
			dataset := strings.TrimSuffix(trace, "-trace.csv") + "-dataset.json"
			reqs := replayOf(t, dataset, nil)
			if n := float64(len(reqs)); math.Abs(n-tt.expected)/tt.expected > tt.tol {
				t.Errorf("generated %d requests, want %.0f ± %.0f%%", len(reqs), tt.expected, 100*tt.tol)
			}
			for i, r := range reqs {
				if i > 0 && r.Arrival < reqs[i-1].Arrival {
					t.Fatalf("request %d arrives before request %d", i, i-1)
				}
				w := m.windowAt(r.Arrival)
				if w == nil || w.gaps == nil || w.lengths < 0 {
					t.Fatalf("request %d at %.3f s falls outside every active window", i, float64(r.Arrival)/1e9)
				}
				if !m.lengths[w.lengths].input.has(r.InputTokens) || !m.lengths[w.lengths].output.has(r.OutputTokens) {
					t.Fatalf("request %d: lengths %d, %d not in its window's distributions", i, r.InputTokens, r.OutputTokens)
				}
			}
		})
	}
}

// windowAt returns the window holding time t (ns since the first window).
func (m *ServeGen) windowAt(t int64) *servegenWindow {
	for i := range m.windows {
		w := &m.windows[i]
		if t+m.origin >= w.start && t+m.origin < w.end {
			return w
		}
	}
	return nil
}

func (p *pmf) has(v int) bool {
	for _, x := range p.values {
		if int(x) == v {
			return true
		}
	}
	return false
}

// TestServeGenWindowRates: a synthetic client with one Gamma and one
// Weibull window generates each window's rate and shape.
func TestServeGenWindowRates(t *testing.T) {
	trace := "0,0,0,,0,0\n600,2,4,Gamma,0.0625,8\n1200,5,0,Weibull,0.5,1\n1800,0,0,,0,0\n"
	dataset := `{"0": {"input_tokens": "{100: 1}", "output_tokens": "{10: 0.25, 20: 0.75}", "reason_ratio": "{0.5: 1.0}"},
	"1200": {"input_tokens": "{}", "output_tokens": "{}"}}`
	m, err := ParseServeGen(strings.NewReader(trace), "t-trace.csv", strings.NewReader(dataset), "t-dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	var gamma, weib []Request
	var out20 int
	const runs = 300
	for seed := range uint64(runs) {
		for _, r := range Collect(m.Source(seed), 0) {
			switch s := r.Arrival / 1e9; {
			case s >= 600 && s < 1200:
				gamma = append(gamma, r)
			case s >= 1200 && s < 1800:
				weib = append(weib, r)
			default:
				t.Fatalf("arrival at %d ns, outside the active windows", r.Arrival)
			}
			if r.InputTokens != 100 || (r.OutputTokens != 10 && r.OutputTokens != 20) {
				t.Fatalf("lengths %d, %d", r.InputTokens, r.OutputTokens)
			}
			if r.OutputTokens == 20 {
				out20++
			}
		}
	}
	// Rates: 2/s and 5/s over 600 s, per run.
	for _, w := range []struct {
		name string
		got  []Request
		want float64
		tol  float64
	}{{"gamma", gamma, 2 * 600 * runs, 0.1}, {"weibull", weib, 5 * 600 * runs, 0.03}} {
		if n := float64(len(w.got)); math.Abs(n-w.want)/w.want > w.tol {
			t.Errorf("%s window: %.0f arrivals over %d runs, want %.0f ± %.0f%%", w.name, n, runs, w.want, 100*w.tol)
		}
	}
	// The empty 1200 key falls back to the 0 key's lengths: 3/4 of outputs are 20.
	if share := float64(out20) / float64(len(gamma)+len(weib)); math.Abs(share-0.75) > 0.01 {
		t.Errorf("share of output 20: %.3f, want 0.75", share)
	}
	if m.ExpectedRequests() != 2*600+5*600 || m.Span() != 2400 {
		t.Errorf("ExpectedRequests %g, Span %g", m.ExpectedRequests(), m.Span())
	}
}

func TestServeGenErrors(t *testing.T) {
	const okTrace = "0,1,1,Gamma,1,1\n600,0,0,,0,0\n"
	const okData = `{"0": {"input_tokens": "{5: 1}", "output_tokens": "{5: 1}"}}`
	tests := []struct {
		trace, data, want string
	}{
		{"0,1,1,Gamma,1\n", okData, "t-trace.csv:1: expected 6 fields ts_s,rate_rps,cv,pattern,arg1,arg2, got 5"},
		{"0,x,1,Gamma,1,1\n", okData, `t-trace.csv:1: rate_rps: expected a finite number ≥ 0, got "x"`},
		{"0,1,1,Gamma,1,1\n0,1,1,Gamma,1,1\n", okData, `t-trace.csv:2: ts_s: windows must start in increasing order, got "0" after 0`},
		{"0.5,1,1,Gamma,1,1\n", okData, `t-trace.csv:1: ts_s: expected whole seconds`},
		{"0,1,1,Pareto,1,1\n", okData, `t-trace.csv:1: pattern: expected Gamma, Weibull or empty, got "Pareto"`},
		{"0,1,1,Gamma,0,1\n", okData, `t-trace.csv:1: arg1: Gamma shape must be in [0.001, 10000], got "0"`},
		{"0,1,1,Weibull,0.01,1\n", okData, `t-trace.csv:1: arg1: Weibull shape must be in [0.05, 100], got "0.01"`},
		{"0,0,0,,0,0\n", okData, "t-trace.csv: every window is idle"},
		{"", okData, "t-trace.csv:1: no windows"},
		{okTrace, `{"0": {"input_tokens": "{5: 1}"}}`, `t-dataset.json:1: window "0": needs both input_tokens and output_tokens`},
		{okTrace, `{"0": {"input_tokens": "{5: 1}", "output_tokens": "{0: 1}"}}`, `t-dataset.json:1: window "0": output_tokens: entry 1: expected a token count ≥ 1, got "0"`},
		{okTrace, "{\"0\": {\"input_tokens\": \"{5: 1}\",\n \"output_tokens\": \"{5: -1}\"}}", `t-dataset.json:2: window "0": output_tokens: entry 1: expected a probability ≥ 0, got "-1"`},
		{okTrace, `{"0": {"input_tokens": "{5: 1, 5: 2}", "output_tokens": "{5: 1}"}}`, `input_tokens: length 5 appears twice`},
		{okTrace, `{"0": {"input_tokens": "[5]", "output_tokens": "{5: 1}"}}`, `input_tokens: expected a dict literal`},
		{okTrace, `{"0": {"input_tokens": 5, "output_tokens": "{5: 1}"}}`, `input_tokens: expected a string holding a dict literal`},
		{okTrace, `{"x": {}}`, `window key: expected whole seconds`},
		{okTrace, `{"0": {"input_tokens": "{5: 1}", "output_tokens": "{5: 1}"}`, `t-dataset.json:1: unexpected end of file`},
		{okTrace, `{"0": {"input_tokens": "{5: 1}", "output_tokens": "{5: 1}"}} []`, `unexpected data after the object`},
		{okTrace, `{"0": {"input_tokens": "{5: 1}", "output_tokens": "{5: 1}",}}`, `t-dataset.json:1: malformed JSON`},
		{"0,0,0,,0,0\n600,1,1,Gamma,1,1\n", `{"1200": {"input_tokens": "{5: 1}", "output_tokens": "{5: 1}"}}`, "no active window has length distributions"},
	}
	for _, tt := range tests {
		_, err := ParseServeGen(strings.NewReader(tt.trace), "t-trace.csv", strings.NewReader(tt.data), "t-dataset.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("trace %q, dataset %q: error = %v\nwant it to contain %q", tt.trace, tt.data, err, tt.want)
		}
	}
	if _, err := ReadServeGen("client.csv"); err == nil || !strings.Contains(err.Error(), "a ServeGen client is a pair of files") {
		t.Errorf("ReadServeGen(client.csv) = %v", err)
	}
}

func TestParsePMF(t *testing.T) {
	p, err := parsePMF(" {3: 0.5, 1: 0.25, 2: 0, 4: 0.25,} ")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1, 3, 4}; len(p.values) != 3 || p.values[0] != want[0] || p.values[1] != want[1] || p.values[2] != want[2] {
		t.Errorf("values %v, want %v (zero weights dropped, sorted)", p.values, want)
	}
	if p.cum[0] != 0.25 || p.cum[1] != 0.75 || p.cum[2] != 1 {
		t.Errorf("cum %v", p.cum)
	}
	if p, err := parsePMF("{}"); p != nil || err != nil {
		t.Errorf("parsePMF({}) = %v, %v, want nil, nil", p, err)
	}
}
