package workloads

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/workloads/seed"
)

func TestParseDistNewKinds(t *testing.T) {
	tests := []struct {
		spec, want, wantErr string
	}{
		{spec: "pareto:16,1.5", want: "pareto:16,1.5"},
		{spec: "pareto:16, 1.5, 2147483647", want: "pareto:16,1.5"},
		{spec: "pareto:16,0.8,8192", want: "pareto:16,0.8,8192"},
		{spec: "table:512=0.3, 128=0.5,2048=0.2", want: "table:128=0.5,512=0.3,2048=0.2"},
		{spec: "table:7=2", want: "table:7=2"},
		{spec: "empirical:traces/x.csv:num_prefill_tokens", want: "empirical:traces/x.csv:num_prefill_tokens"},
		{spec: "empirical: C:\\t,x.csv : input_length ", want: "empirical:C:\\t,x.csv:input_length"},

		{spec: "pareto:16", wantErr: `pareto: expected MIN,ALPHA[,MAX], got "16"`},
		{spec: "pareto:16,0", wantErr: `pareto: ALPHA must be a number in (0, 100], got "0"`},
		{spec: "pareto:16,1,8", wantErr: `pareto: MIN must be ≤ MAX, got MIN=16, MAX=8`},
		{spec: "table:", wantErr: `table: entry 1: expected LEN=WEIGHT, got ""`},
		{spec: "table:128=0.5,128=0.5", wantErr: `table: LEN 128 appears twice`},
		{spec: "table:0=1", wantErr: `table: entry 1: LEN must be an integer in [1, 2147483647], got "0"`},
		{spec: "table:5=-1", wantErr: `table: entry 1: WEIGHT must be a finite number ≥ 0, got "-1"`},
		{spec: "table:5=0,6=0", wantErr: `table: the weights must have a positive, finite sum`},
		{spec: "table:5=NaN", wantErr: `WEIGHT must be a finite number`},
		{spec: "empirical:x.csv", wantErr: `empirical: expected FILE:COLUMN`},
		{spec: "empirical:x.csv:", wantErr: `empirical: expected FILE:COLUMN`},
		{spec: "empirical::col", wantErr: `empirical: expected FILE:COLUMN`},
	}
	for _, tt := range tests {
		d, err := ParseDist(tt.spec)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseDist(%q) error = %v, want it to contain %q", tt.spec, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseDist(%q): %v", tt.spec, err)
		case tt.wantErr == "" && d.String() != tt.want:
			t.Errorf("ParseDist(%q).String() = %q, want %q", tt.spec, d.String(), tt.want)
		case tt.wantErr == "":
			if again := MustParseDist(d.String()); again != d {
				t.Errorf("ParseDist(%q) is not == to the parse of its String", tt.spec)
			}
		}
	}
}

func TestParetoAndTableMeans(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want float64 // exact mean, ignoring rounding
		tol  float64 // relative, for the sample mean
	}{
		{"pareto:100,3", 150, 0.02},           // α·m/(α−1)
		{"pareto:100,2,1000", 190, 0.02},      // m + m(1 − m/b)
		{"pareto:100,1,1000", 330.2585, 0.02}, // m + m·ln(b/m)
		{"pareto:100,0.5,10000", 1900, 0.03},  // m + m((m/b)^(−1/2) − 1)/(1/2)
		{"table:128=0.5,512=0.3,2048=0.2", 627.2, 0.02},
	} {
		d := MustParseDist(tt.spec)
		if got := d.Mean(); math.Abs(got-tt.want) > 1e-3*tt.want {
			t.Errorf("%s: Mean() = %.4f, want %.4f", tt.spec, got, tt.want)
		}
		d, err := d.Load()
		if err != nil {
			t.Fatal(err)
		}
		r := seed.Stream(7, "test", 7)
		var sum float64
		const n = 400_000
		for range n {
			sum += float64(d.Sample(&r))
		}
		if got := sum / n; math.Abs(got-tt.want)/tt.want > tt.tol {
			t.Errorf("%s: sample mean %.1f, want %.1f ± %.0f%%", tt.spec, got, tt.want, 100*tt.tol)
		}
	}
	// A table draws each length with its probability.
	d, _ := MustParseDist("table:128=0.5,512=0.3,2048=0.2").Load()
	counts := map[int]int{}
	r := seed.Stream(1, "test", 2)
	for range 100_000 {
		counts[d.Sample(&r)]++
	}
	for v, p := range map[int]float64{128: 0.5, 512: 0.3, 2048: 0.2} {
		if got := float64(counts[v]) / 100_000; math.Abs(got-p) > 0.01 {
			t.Errorf("table: %d drawn with frequency %.3f, want %.2f", v, got, p)
		}
	}
	if len(counts) != 3 || d.Min() != 128 || d.Max() != 2048 {
		t.Errorf("table: drew %v, Min %d, Max %d", counts, d.Min(), d.Max())
	}
}

func TestEmpiricalDist(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "lens.csv")
	if err := os.WriteFile(csvPath, []byte("a,n\nx,10\ny,20.0\nz,30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "lens.jsonl")
	if err := os.WriteFile(jsonPath, []byte(`{"n": 5, "o": [1]}`+"\n\n"+`{"o": {}, "n": 7}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		spec     string
		min, max int
		mean     float64
	}{
		{"empirical:" + csvPath + ":n", 10, 30, 20},
		{"empirical:" + jsonPath + ":n", 5, 7, 6},
	} {
		d := MustParseDist(tt.spec)
		if !math.IsNaN(d.Mean()) || d.Max() != MaxLength {
			t.Errorf("%s before Load: Mean %g, Max %d, want NaN and MaxLength", tt.spec, d.Mean(), d.Max())
		}
		d, err := d.Load()
		if err != nil {
			t.Fatalf("%s: Load: %v", tt.spec, err)
		}
		if d.Min() != tt.min || d.Max() != tt.max || d.Mean() != tt.mean {
			t.Errorf("%s: Min, Max, Mean = %d, %d, %g, want %d, %d, %g", tt.spec, d.Min(), d.Max(), d.Mean(), tt.min, tt.max, tt.mean)
		}
		r := seed.Stream(1, "test", 1)
		for range 100 {
			if v := d.Sample(&r); v < tt.min || v > tt.max {
				t.Fatalf("%s: Sample() = %d", tt.spec, v)
			}
		}
	}
	// The workload loads it; a relative FILE resolves against a scenario's folder.
	c := DefaultConfig()
	c.InputLen = MustParseDist("empirical:lens.csv:n")
	c = c.ResolvePaths(dir)
	if want := "empirical:" + csvPath + ":n"; c.InputLen.String() != want {
		t.Errorf("ResolvePaths: input_len %q, want %q", c.InputLen, want)
	}
	for _, r := range Collect(mustNew(t, c, 1), 0) {
		if r.InputTokens != 10 && r.InputTokens != 20 && r.InputTokens != 30 {
			t.Fatalf("request input %d, not a value of the column", r.InputTokens)
		}
	}

	bad := []struct{ name, content, col, want string }{
		{"missing.csv", "", "n", "no such file"},
		{"nocol.csv", "a,b\n1,2\n", "n", "nocol.csv:1: missing column n"},
		{"neg.csv", "n\n5\n-3\n", "n", `neg.csv:3: n: expected a positive integer ≤ 2147483647, got "-3"`},
		{"empty.csv", "n\n", "n", "empty.csv: no values in column n"},
		{"bad.jsonl", "{\"n\": 1}\n{\"n\": 2,}\n", "n", "bad.jsonl:2: malformed JSON at column 9: expected a quoted key"},
		{"str.jsonl", "{\"n\": \"4\"}\n", "n", "str.jsonl:1: n: malformed JSON at column 7: expected a number"},
		{"absent.jsonl", "{\"m\": 4}\n", "n", "absent.jsonl:1: missing field n"},
	}
	for _, b := range bad {
		path := filepath.Join(dir, b.name)
		if b.content != "" || b.name != "missing.csv" {
			if err := os.WriteFile(path, []byte(b.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := MustParseDist("empirical:" + path + ":" + b.col).Load()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: Load error = %v, want it to contain %q", b.name, err, b.want)
		}
	}
	c = DefaultConfig()
	c.OutputLen = MustParseDist("empirical:" + filepath.Join(dir, "missing.csv") + ":n")
	if _, err := New(c, 1); err == nil || !strings.HasPrefix(err.Error(), "workload.output_len: empirical:") {
		t.Errorf("New with a missing empirical file: %v, want an error naming workload.output_len", err)
	}
}
