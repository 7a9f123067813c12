package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// GuideLLM benchmark JSON (`guidellm benchmark --output-path X.json`):
// {"benchmarks": [...]}, one benchmark per load level of a sweep, each
// becoming one run. Requests are read from benchmarks[i].requests.successful
// (streams) and .errored and .incomplete (failed, counted by list). Per
// request, both schemas GuideLLM has written:
//
//   - up to v0.3: start_time, first_token_time, last_token_time (s since
//     the epoch), prompt_tokens, output_tokens;
//   - from v0.4: info.timings.request_start, .first_token_iteration,
//     .last_token_iteration (s), .token_iterations (chunks), and
//     input_metrics.total_tokens, output_metrics.total_tokens (or the
//     serialized prompt_tokens, output_tokens).
//
// GuideLLM keeps only the first and last token times of a request, so
// TTFT, E2EL (to the last token) and TPOT are exact, but gaps are unknown:
// pooled ITL, per-stream ITL percentiles, max gap, jitter, ITL goodput and
// stalls cannot be computed, and the output says so. When GuideLLM sampled
// the requests it kept (request_samples), the run covers the sample only.

type guidellmFile struct {
	Benchmarks []struct {
		StartTime      *float64        `json:"start_time"`
		EndTime        *float64        `json:"end_time"`
		RequestSamples json.RawMessage `json:"request_samples"`
		// The strategy sits under args (v0.3) or scheduler / config (later).
		Args      *guidellmStrategyHolder `json:"args"`
		Scheduler *guidellmStrategyHolder `json:"scheduler"`
		Config    *guidellmStrategyHolder `json:"config"`
		Requests  *struct {
			Successful []guidellmRequest `json:"successful"`
			Errored    []guidellmRequest `json:"errored"`
			Incomplete []guidellmRequest `json:"incomplete"`
		} `json:"requests"`
	} `json:"benchmarks"`
}

type guidellmStrategyHolder struct {
	Strategy *guidellmStrategy `json:"strategy"`
}

// guidellmStrategy is GuideLLM's SchedulingStrategy: type_ is synchronous,
// concurrent (streams), throughput (max_concurrency), constant or poisson
// (rate, requests/s).
type guidellmStrategy struct {
	Type           string   `json:"type_"`
	Rate           *float64 `json:"rate"`
	Streams        *int     `json:"streams"`
	MaxConcurrency *int     `json:"max_concurrency"`
}

// load maps a GuideLLM strategy onto a Load; ok is false for an unknown type.
func (s *guidellmStrategy) load() (Load, bool) {
	var l Load
	switch s.Type {
	case "synchronous":
		l = Load{Strategy: StrategyConcurrent, Concurrency: 1}
	case "concurrent":
		if s.Streams == nil || *s.Streams < 1 {
			return l, false
		}
		l = Load{Strategy: StrategyConcurrent, Concurrency: *s.Streams}
	case "throughput":
		l = Load{Strategy: StrategyAllAtOnce}
		if s.MaxConcurrency != nil && *s.MaxConcurrency > 0 {
			l.Concurrency = *s.MaxConcurrency
		}
	case "constant", "poisson":
		if s.Rate == nil || !(*s.Rate > 0) || math.IsInf(*s.Rate, 0) {
			return l, false
		}
		l = Load{Strategy: StrategyPoisson, Rate: *s.Rate}
		if s.Type == "constant" {
			l.Strategy = StrategyConstant
		}
	default:
		return l, false
	}
	return l, true
}

type guidellmRequest struct {
	StartTime      *float64 `json:"start_time"`
	FirstTokenTime *float64 `json:"first_token_time"`
	LastTokenTime  *float64 `json:"last_token_time"`
	PromptTokens   *int     `json:"prompt_tokens"`
	OutputTokens   *int     `json:"output_tokens"`
	Info           *struct {
		Timings *struct {
			RequestStart        *float64 `json:"request_start"`
			FirstTokenIteration *float64 `json:"first_token_iteration"`
			LastTokenIteration  *float64 `json:"last_token_iteration"`
			TokenIterations     *int     `json:"token_iterations"`
		} `json:"timings"`
	} `json:"info"`
	InputMetrics *struct {
		TotalTokens *int `json:"total_tokens"`
	} `json:"input_metrics"`
	OutputMetrics *struct {
		TotalTokens *int `json:"total_tokens"`
	} `json:"output_metrics"`
}

// times returns the request's start, first and last token times (s).
func (q *guidellmRequest) times() (start, first, last *float64) {
	start, first, last = q.StartTime, q.FirstTokenTime, q.LastTokenTime
	if q.Info != nil && q.Info.Timings != nil {
		t := q.Info.Timings
		start, first, last = or(start, t.RequestStart), or(first, t.FirstTokenIteration), or(last, t.LastTokenIteration)
	}
	return
}

func (q *guidellmRequest) tokens() (in, out int, ok bool) {
	pin, pout := q.PromptTokens, q.OutputTokens
	if q.InputMetrics != nil {
		pin = or(pin, q.InputMetrics.TotalTokens)
	}
	if q.OutputMetrics != nil {
		pout = or(pout, q.OutputMetrics.TotalTokens)
	}
	if pin != nil {
		in = *pin
	}
	if pout == nil {
		return in, 0, false
	}
	return in, *pout, true
}

func or[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func parseGuideLLM(name string, data []byte) ([]Recording, error) {
	var f guidellmFile
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
	if len(f.Benchmarks) == 0 {
		return nil, fmt.Errorf("%s: not a GuideLLM benchmark file: expected a non-empty \"benchmarks\" list", name)
	}
	var recs []Recording
	for b, bm := range f.Benchmarks {
		rec := Recording{Name: baseName(name), NoGaps: true}
		if len(f.Benchmarks) > 1 {
			rec.Name = fmt.Sprintf("%s#%d", baseName(name), b+1)
		}
		rec.Notes = append(rec.Notes, "GuideLLM records only the first and last token time of each request: "+
			"per-gap metrics (pooled ITL, per-stream ITL, max gap, jitter, ITL goodput, stalls) cannot be computed")
		if bm.Requests == nil {
			return nil, fmt.Errorf("%s: benchmarks[%d]: no \"requests\": save the benchmark with its requests", name, b)
		}
		for _, h := range []*guidellmStrategyHolder{bm.Args, bm.Scheduler, bm.Config} {
			if h == nil || h.Strategy == nil {
				continue
			}
			if l, ok := h.Strategy.load(); ok {
				rec.Load = l
			} else {
				rec.Notes = append(rec.Notes, fmt.Sprintf("strategy %q not understood: its schedule is unknown", h.Strategy.Type))
			}
			break
		}
		if s := string(bm.RequestSamples); s != "" && s != "null" {
			rec.Notes = append(rec.Notes, "GuideLLM kept a sample of the requests (request_samples): figures cover the sample")
		}
		t0 := math.Inf(1)
		if bm.StartTime != nil {
			t0 = *bm.StartTime
		}
		for _, q := range bm.Requests.Successful {
			if s, _, _ := q.times(); s != nil {
				t0 = min(t0, *s)
			}
		}
		for i := range bm.Requests.Successful {
			q := &bm.Requests.Successful[i]
			where := fmt.Sprintf("benchmarks[%d].requests.successful[%d]", b, i)
			start, first, last := q.times()
			if start == nil || first == nil || last == nil {
				return nil, fmt.Errorf("%s: %s: expected start_time, first_token_time and last_token_time "+
					"(or info.timings.request_start, first_token_iteration, last_token_iteration)", name, where)
			}
			in, out, ok := q.tokens()
			if !ok {
				return nil, fmt.Errorf("%s: %s: expected output_tokens (or output_metrics.total_tokens)", name, where)
			}
			s := Stream{ID: len(rec.Streams), InputTokens: in, OutputTokens: out,
				Arrival: (*start - t0) * 1e9, TTFT: (*first - *start) * 1e9, E2EL: (*last - *start) * 1e9}
			if t := q.Info; t != nil && t.Timings != nil && t.Timings.TokenIterations != nil {
				s.Chunks = *t.Timings.TokenIterations
			}
			if err := checkStream(where, &s); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			rec.Streams = append(rec.Streams, s)
		}
		for range bm.Requests.Errored {
			rec.fail("errored")
		}
		for range bm.Requests.Incomplete {
			rec.fail("incomplete")
		}
		rec.Duration = span(rec.Streams)
		if bm.StartTime != nil && bm.EndTime != nil && *bm.EndTime >= *bm.StartTime {
			if d := (*bm.EndTime - t0) * 1e9; checkTime("duration", d) == nil {
				rec.Duration = max(rec.Duration, d)
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
