package workloads

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVLLMBenchWorkload(t *testing.T) {
	dir := t.TempDir()
	cfg := func(trace, format string) Config {
		c := DefaultConfig()
		c.Trace, c.Format = trace, format
		return c
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	starts := write("starts.json", `{"input_lens": [10, 20, 30], "output_lens": [5, 0, 7], "start_times": [100.5, 100.0, 101.0], "errors": ["", "boom", ""], "request_rate": 4}`)
	if f, err := DetectFormat(starts); err != nil || f != FormatVLLMBench {
		t.Fatalf("detected %q, %v", f, err)
	}
	// A result of 20000 prompts has only its first array in the first
	// 64 KiB the detector reads: still a vLLM benchmark result.
	big := write("big.json", `{"request_rate": 10, "input_lens": [`+strings.Repeat("100, ", 19999)+`100], "output_lens": [`+strings.Repeat("10, ", 19999)+`10]}`)
	if f, err := DetectFormat(big); err != nil || f != FormatVLLMBench {
		t.Fatalf("20000 prompts: detected %q, %v", f, err)
	}
	if n := len(Collect(must(New(cfg(big, ""), 1)), 0)); n != 20000 {
		t.Errorf("20000 prompts: read %d requests", n)
	}
	src, err := New(cfg(starts, ""), 1)
	if err != nil {
		t.Fatal(err)
	}
	reqs := Collect(src, 0)
	if len(reqs) != 2 || reqs[0].InputTokens != 10 || reqs[0].Arrival != 500_000_000 || reqs[1].Arrival != 1_000_000_000 {
		t.Errorf("requests %+v: want the two without errors, at their start times from the earliest", reqs)
	}
	inf := write("inf.json", `{"request_rate": "inf", "input_lens": [10, 20], "output_lens": [5, 6]}`)
	src, err = New(cfg(inf, ""), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Collect(src, 0) {
		if r.Arrival != 0 {
			t.Errorf("rate inf: arrival %d, want 0", r.Arrival)
		}
	}
	poisson := write("rate.json", `{"request_rate": 2.0, "input_lens": [10, 20, 30], "output_lens": [5, 6, 7]}`)
	src, err = New(cfg(poisson, ""), 1)
	if err != nil {
		t.Fatal(err)
	}
	if rs := Collect(src, 0); rs[0].Arrival != 0 || rs[2].Arrival <= rs[1].Arrival {
		t.Errorf("rate 2: arrivals %d %d %d, want Poisson from 0", rs[0].Arrival, rs[1].Arrival, rs[2].Arrival)
	}
	for _, c := range []struct{ name, data, want string }{
		{"uneven", `{"request_rate": 1, "input_lens": [1, 2], "output_lens": [1]}`, "equal, non-zero length"},
		{"no schedule", `{"input_lens": [1], "output_lens": [1]}`, "neither start_times nor a request_rate"},
		{"bad json", `{"input_lens": [1], "output_lens": [1], "request_rate": }`, "not a vLLM benchmark result"},
	} {
		p := write(c.name+".json", c.data)
		_, err := New(cfg(p, FormatVLLMBench), 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
