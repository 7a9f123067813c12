package workloads

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RequestEstimate counts what each kind of workload will make: a
// generator's requests or rate × duration, a closed loop's bound (or one
// request per user), a line-based trace's rows (less a CSV
// header, times the sample), and 0 when the count is not known up front.
func TestRequestEstimate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonl := write("t.jsonl", strings.Repeat(`{"arrival_s":0,"input_tokens":8,"output_tokens":4}`+"\n", 300))
	bench := write("bench.json", `{"date": "x", "input_lens": [10, 20,
 30, 40], "output_lens": [5, 6, 7, 8], "request_rate": 2}`)
	benchEmpty := write("empty-bench.json", `{"input_lens": [ ], "output_lens": []}`)
	write("sg-trace.csv", "0,0,0,,0,0\n600,2,4,Gamma,0.0625,8\n1200,0,0,,0,0\n")
	write("sg-dataset.json", `{"0": {"input_tokens": "{100: 1}", "output_tokens": "{10: 1}"}}`)
	csv := write("t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+strings.Repeat("2023-11-16 18:15:46.6805900,374,44\n", 99)+"2023-11-16 18:15:47.0,10,2")
	for _, c := range []struct {
		name string
		cfg  func(c *Config)
		want float64
	}{
		{"requests", func(c *Config) { c.Requests = 500 }, 500},
		{"rate over a duration", func(c *Config) { c.Requests, c.Rate, c.DurationS = 0, 10, 60 }, 600},
		{"closed loop bounded by requests", func(c *Config) { c.Arrival, c.Users, c.Requests = ArrivalClosed, 8, 5000 }, 5000},
		{"closed loop over a duration", func(c *Config) {
			c.Arrival, c.Users, c.Requests, c.DurationS, c.ThinkS = ArrivalClosed, 8, 0, 100, 2
		}, 8},
		{"jsonl trace", func(c *Config) { c.Trace, c.Requests = jsonl, 0 }, 300},
		{"csv trace, last line without a newline", func(c *Config) { c.Trace, c.Requests = csv, 0 }, 100},
		{"sampled trace", func(c *Config) { c.Trace, c.Requests, c.Sample = jsonl, 0, 0.5 }, 150},
		{"vLLM benchmark result", func(c *Config) { c.Trace, c.Requests = bench, 0 }, 4},
		{"sampled vLLM benchmark result", func(c *Config) { c.Trace, c.Requests, c.Sample = bench, 0, 0.5 }, 2},
		{"empty vLLM benchmark result", func(c *Config) { c.Trace, c.Requests = benchEmpty, 0 }, 0},
		{"ServeGen client", func(c *Config) { c.Trace, c.Requests = filepath.Join(dir, "sg-trace.csv"), 0 }, 1200},
		{"missing trace", func(c *Config) { c.Trace, c.Requests = filepath.Join(dir, "missing.csv"), 0 }, 0},
	} {
		cfg := DefaultConfig()
		c.cfg(&cfg)
		if got := RequestEstimate(cfg); got != c.want {
			t.Errorf("%s: %g requests, want %g", c.name, got, c.want)
		}
	}
	// A second look at an unchanged file is answered without reading it.
	if _, err := cachedCount(jsonl, "lines", countLines); err != nil {
		t.Fatal(err)
	}
	n := 0
	counts.Range(func(_, _ any) bool { n++; return true })
	if n != 4 {
		t.Errorf("%d files counted, want 4 (the two traces and two results, each once)", n)
	}
}

// The input_lens count finds the key and its array wherever the 64 KiB
// reads cut them, and stops at the array's end.
func TestCountInputLensAcrossReads(t *testing.T) {
	dir := t.TempDir()
	for _, pad := range []int{0, 1<<16 - 5, 1<<16 - 13, 1<<16 - 14, 1<<16 - 16, 1<<16 + 3} {
		body := `{"date": "` + strings.Repeat("x", pad) + `", "input_lens": [` + strings.Repeat("7, ", 29999) + `7], "output_lens": [1, 2, 3]}`
		p := filepath.Join(dir, "b.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if n, err := countInputLens(p); n != 30000 || err != nil {
			t.Errorf("pad %d: %d entries (%v), want 30000", pad, n, err)
		}
	}
}
