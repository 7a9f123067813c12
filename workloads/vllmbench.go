package workloads

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// FormatVLLMBench is a vLLM benchmark result (`benchmark_serving.py
// --save-result`, `vllm bench serve --save-result`) replayed as a
// workload: each successful request's input_lens and output_lens, arriving
// at its start_times when the file has them, else as the benchmark sent
// them: Poisson at request_rate (drawn from the workload seed), or all at
// t = 0 for "inf". Requests with an error are left out.
const FormatVLLMBench = "vllm-bench"

// isVLLMBench reports whether the start of a JSON file looks like a vLLM
// benchmark result: it names input_lens or output_lens (a result of more
// than about 13000 prompts has only the first of the two arrays in its
// first 64 KiB; the reader then checks that both are there).
func isVLLMBench(head []byte) bool {
	return bytes.Contains(head, []byte(`"input_lens"`)) || bytes.Contains(head, []byte(`"output_lens"`))
}

type vllmBench struct {
	InputLens   []int           `json:"input_lens"`
	OutputLens  []int           `json:"output_lens"`
	StartTimes  []float64       `json:"start_times"`
	Errors      []*string       `json:"errors"`
	RequestRate json.RawMessage `json:"request_rate"`
}

// readVLLMBench reads path into an in-memory source.
func readVLLMBench(path string, seed uint64) (Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f vllmBench
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a vLLM benchmark result: %v", path, err)
	}
	n := len(f.InputLens)
	if n == 0 || len(f.OutputLens) != n {
		return nil, fmt.Errorf("%s: expected input_lens and output_lens of equal, non-zero length, got %d and %d", path, n, len(f.OutputLens))
	}
	for _, l := range []struct {
		key string
		n   int
	}{{"start_times", len(f.StartTimes)}, {"errors", len(f.Errors)}} {
		if l.n != 0 && l.n != n {
			return nil, fmt.Errorf("%s: %q has %d entries but input_lens has %d", path, l.key, l.n, n)
		}
	}
	rate := math.NaN()
	if r := strings.Trim(string(f.RequestRate), `"`); r == "inf" {
		rate = math.Inf(1)
	} else if v, err := strconv.ParseFloat(r, 64); err == nil && v > 0 {
		rate = v
	}
	if f.StartTimes == nil && math.IsNaN(rate) {
		return nil, fmt.Errorf("%s: neither start_times nor a request_rate: cannot tell when the requests arrived", path)
	}
	t0 := math.Inf(1)
	for _, t := range f.StartTimes {
		t0 = min(t0, t)
	}
	rng := stream(seed, "vllm-bench-arrivals")
	var reqs []Request
	var at float64
	for i := range n {
		if f.Errors != nil && f.Errors[i] != nil && *f.Errors[i] != "" {
			continue
		}
		if f.InputLens[i] < 1 || f.OutputLens[i] < 0 {
			return nil, fmt.Errorf("%s: request %d: input_lens %d, output_lens %d: expected ≥ 1 and ≥ 0 tokens", path, i, f.InputLens[i], f.OutputLens[i])
		}
		r := Request{InputTokens: f.InputLens[i], OutputTokens: max(1, f.OutputLens[i])}
		switch {
		case f.StartTimes != nil:
			d := (f.StartTimes[i] - t0) * 1e9
			if !(d >= 0 && d < 1<<62) {
				return nil, fmt.Errorf("%s: start_times[%d]: expected a finite time", path, i)
			}
			r.Arrival = int64(math.Round(d))
		case !math.IsInf(rate, 1):
			r.Arrival = int64(math.Round(at))
			at += rng.ExpFloat64() / rate * 1e9
		}
		reqs = append(reqs, r)
	}
	if f.StartTimes != nil {
		sortByArrival(reqs)
	}
	for i := range reqs {
		reqs[i].ID = i
		reqs[i].Seed = RequestSeed(seed, i)
	}
	return &Slice{Requests: reqs}, nil
}

// sortByArrival orders requests by arrival, keeping file order for ties.
func sortByArrival(reqs []Request) {
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
}
