package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// vLLM benchmark results: the JSON `benchmark_serving.py --save-result` and
// `vllm bench serve --save-result [--save-detailed]` write. Fields read:
//
//   - ttfts (s), itls (list per request of gaps between streamed chunks, s),
//     input_lens, output_lens (tokens), errors (empty for success): parallel
//     per-request lists, all required to have one entry per request;
//   - latencies (s) and start_times (s, perf_counter) when present (newer
//     vLLM): the E2EL and arrival of each request;
//   - duration (s), completed, request_rate (a number or the string "inf"),
//     max_concurrency and burstiness when present: the request schedule
//     (Recording.Load).
//
// A request with a non-empty error, or with no output at all (ttft 0, no
// gaps, no tokens: how old versions record a failed HTTP status), is failed.
// Without latencies, E2EL is reconstructed as ttft + Σ itls: vLLM measures
// both ttft and every gap as differences of the same perf_counter readings,
// so the sum is the last chunk's time to rounding (about 1e-15 relative).
// Without start_times every arrival is 0 and there is no time series.
// Summary keys (mean_itl_ms, ...) and unknown keys, such as the old
// "request_goodput:" spelled with a colon, are ignored.

type vllmFile struct {
	ModelID     *string         `json:"model_id"`
	Duration    *float64        `json:"duration"`
	Completed   *int            `json:"completed"`
	RequestRate json.RawMessage `json:"request_rate"`
	InputLens   []int           `json:"input_lens"`
	OutputLens  []int           `json:"output_lens"`
	TTFTs       []*float64      `json:"ttfts"`
	ITLs        [][]*float64    `json:"itls"`
	Errors      []*string       `json:"errors"`
	Latencies   []*float64      `json:"latencies"`
	StartTimes  []*float64      `json:"start_times"`
	// MaxConcurrency and Burstiness describe the schedule (newer vLLM).
	MaxConcurrency *int     `json:"max_concurrency"`
	Burstiness     *float64 `json:"burstiness"`
}

func parseVLLM(name string, data []byte) ([]Recording, error) {
	var f vllmFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, jsonError(data, 0, err))
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return nil, fmt.Errorf("%s: %s: unexpected data after the JSON object", name, position(data, off))
	}
	if err := checkDuplicateKeys(name, data, data, 0); err != nil {
		return nil, err
	}
	n := len(f.TTFTs)
	if f.TTFTs == nil || f.ITLs == nil {
		return nil, fmt.Errorf("%s: not a vLLM benchmark result: expected per-request lists \"ttfts\" and \"itls\" (save it with --save-result)", name)
	}
	for _, l := range []struct {
		key string
		len int
		ok  bool
	}{
		{"itls", len(f.ITLs), true},
		{"input_lens", len(f.InputLens), f.InputLens != nil},
		{"output_lens", len(f.OutputLens), f.OutputLens != nil},
		{"errors", len(f.Errors), f.Errors != nil},
		{"latencies", len(f.Latencies), f.Latencies != nil},
		{"start_times", len(f.StartTimes), f.StartTimes != nil},
	} {
		if l.ok && l.len != n {
			return nil, fmt.Errorf("%s: %q has %d entries but \"ttfts\" has %d: the per-request lists must be parallel", name, l.key, l.len, n)
		}
	}
	if f.OutputLens == nil {
		return nil, fmt.Errorf("%s: no \"output_lens\": TPOT needs each request's output tokens", name)
	}
	rec := Recording{Name: baseName(name)}
	if f.ModelID != nil {
		rec.Model = *f.ModelID
	}
	if rate := strings.Trim(string(f.RequestRate), `"`); rate != "" && rate != "null" {
		rec.Notes = append(rec.Notes, "request rate "+rate+" req/s")
		if rate == "inf" {
			rec.Load.Strategy = StrategyAllAtOnce
		} else if r, err := strconv.ParseFloat(rate, 64); err == nil && r > 0 && !math.IsInf(r, 0) {
			rec.Load.Strategy, rec.Load.Rate = StrategyPoisson, r
		}
	}
	if f.MaxConcurrency != nil && *f.MaxConcurrency > 0 {
		rec.Load.Concurrency = *f.MaxConcurrency
		if rec.Load.Strategy == "" {
			rec.Load.Strategy = StrategyAllAtOnce
		}
	}
	if f.Burstiness != nil && *f.Burstiness > 0 {
		rec.Load.Burstiness = *f.Burstiness
	}
	if f.Latencies == nil {
		rec.Notes = append(rec.Notes, "E2EL reconstructed as ttft + Σ itls (the file records no latencies)")
	}
	var start0 float64
	if f.StartTimes == nil {
		rec.NoArrivals = true
		rec.Notes = append(rec.Notes, "no request start times: arrivals are 0 and there is no time series")
	} else {
		start0 = math.Inf(1)
		for i, t := range f.StartTimes {
			if t == nil || math.IsNaN(*t) || math.IsInf(*t, 0) {
				return nil, fmt.Errorf("%s: start_times[%d]: expected a number", name, i)
			}
			start0 = min(start0, *t)
		}
	}
	for i := range n {
		errMsg := ""
		if f.Errors != nil && f.Errors[i] != nil {
			errMsg = *f.Errors[i]
		}
		if errMsg != "" {
			rec.fail(errorKind(errMsg))
			continue
		}
		if f.TTFTs[i] == nil {
			return nil, fmt.Errorf("%s: request %d: ttfts[%d] is null but the request has no error", name, i, i)
		}
		if f.ITLs[i] == nil {
			return nil, fmt.Errorf("%s: request %d: itls[%d] is null but the request has no error", name, i, i)
		}
		ttft := *f.TTFTs[i]
		if ttft == 0 && len(f.ITLs[i]) == 0 && f.OutputLens[i] == 0 {
			rec.fail("no output")
			continue
		}
		s := Stream{ID: i, OutputTokens: f.OutputLens[i], TTFT: ttft * 1e9, Chunks: len(f.ITLs[i]) + 1}
		if f.InputLens != nil {
			s.InputTokens = f.InputLens[i]
		}
		e2el := ttft
		s.Gaps = make([]float64, len(f.ITLs[i]))
		for j, g := range f.ITLs[i] {
			if g == nil {
				return nil, fmt.Errorf("%s: request %d: itls[%d][%d] is null: expected a gap in seconds", name, i, i, j)
			}
			s.Gaps[j] = *g * 1e9
			e2el += *g
		}
		if f.Latencies != nil {
			if f.Latencies[i] == nil {
				return nil, fmt.Errorf("%s: request %d: latencies[%d] is null but the request has no error", name, i, i)
			}
			e2el = *f.Latencies[i]
		}
		s.E2EL = e2el * 1e9
		if f.StartTimes != nil {
			s.Arrival = (*f.StartTimes[i] - start0) * 1e9
		}
		if err := checkStream(fmt.Sprintf("request %d (ttfts[%d], itls[%d])", i, i, i), &s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rec.Streams = append(rec.Streams, s)
	}
	if f.Duration != nil {
		d := *f.Duration * 1e9
		if err := checkTime("duration", d); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rec.Duration = d
	} else {
		rec.Duration = span(rec.Streams)
		rec.Notes = append(rec.Notes, "no duration: the run's length is taken from its streams")
	}
	if f.Completed != nil && *f.Completed != len(rec.Streams) {
		rec.Notes = append(rec.Notes, fmt.Sprintf("the file says %d requests completed; %d have output and no error", *f.Completed, len(rec.Streams)))
	}
	return []Recording{rec}, nil
}

// errorKind shortens an error message to a label for counting: the last
// non-empty line (a Python traceback's exception), at most 80 characters.
func errorKind(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	k := strings.TrimSpace(lines[len(lines)-1])
	if r := []rune(k); len(r) > 80 {
		k = string(r[:80]) + "…"
	}
	if k == "" {
		k = "error"
	}
	return k
}

// span is the time from the run's start to its last chunk, ns.
func span(ss []Stream) float64 {
	var end float64
	for i := range ss {
		end = max(end, ss[i].Arrival+ss[i].E2EL)
	}
	return end
}

// baseName is a file's name without folder and extension.
func baseName(path string) string {
	b := filepath.Base(path)
	if e := filepath.Ext(b); e != "" && e != b {
		b = strings.TrimSuffix(b, e)
	}
	return b
}
