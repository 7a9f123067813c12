package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// AIPerf's profile_export.jsonl: one JSON object per request. Fields read:
//
//   - metadata.timestamp_ns: when the request was sent (integer ns since the
//     epoch); arrivals are measured from the earliest record's. Records of
//     metadata.credit_phase "warmup" are skipped.
//   - error: null for success, else {code, type, message}: the request
//     failed (counted by type, never a stream);
//   - metrics.ttft, metrics.inter_chunk_latency (a list: the gaps between
//     streamed chunks), metrics.input_sequence_length,
//     metrics.output_sequence_length (reasoning tokens included; else
//     output_token_count + reasoning_token_count, else one per chunk), each
//     {"value": …, "unit": "ms" | "ns" | "us" | "s" | "tokens"}.
//
// E2EL is the last chunk's time, ttft + Σ inter_chunk_latency;
// metrics.request_latency agrees with it to rounding on AIPerf's own
// example. The run's duration is from the first request sent to the last
// chunk received.

type aiperfRecord struct {
	Metadata *struct {
		TimestampNS *int64 `json:"timestamp_ns"`
		CreditPhase string `json:"credit_phase"`
	} `json:"metadata"`
	Metrics map[string]aiperfMetric `json:"metrics"`
	Error   *struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	} `json:"error"`
}

type aiperfMetric struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// scale converts a metric of unit u to ns (times) or leaves counts alone.
func aiperfScale(key, u string) (float64, error) {
	switch u {
	case "ns":
		return 1, nil
	case "us", "µs":
		return 1e3, nil
	case "ms":
		return 1e6, nil
	case "s", "sec":
		return 1e9, nil
	}
	return 0, fmt.Errorf("metrics.%s: unit %q: expected ns, us, ms or s", key, u)
}

// time reads metric key as a time in ns; ok is false when absent.
func (r *aiperfRecord) time(key string) (ns float64, ok bool, err error) {
	m, ok := r.Metrics[key]
	if !ok {
		return 0, false, nil
	}
	sc, err := aiperfScale(key, m.Unit)
	if err != nil {
		return 0, true, err
	}
	var v float64
	if err := json.Unmarshal(m.Value, &v); err != nil || m.Value == nil || string(m.Value) == "null" {
		return 0, true, fmt.Errorf("metrics.%s.value: expected a number, got %s", key, firstRunes(m.Value, 40))
	}
	return v * sc, true, nil
}

// times reads metric key as a list of times in ns.
func (r *aiperfRecord) times(key string) ([]float64, bool, error) {
	m, ok := r.Metrics[key]
	if !ok {
		return nil, false, nil
	}
	sc, err := aiperfScale(key, m.Unit)
	if err != nil {
		return nil, true, err
	}
	var vs []*float64
	if err := json.Unmarshal(m.Value, &vs); err != nil || vs == nil {
		return nil, true, fmt.Errorf("metrics.%s.value: expected a list of numbers, got %s", key, firstRunes(m.Value, 40))
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		if v == nil {
			return nil, true, fmt.Errorf("metrics.%s.value[%d]: expected a number, got null", key, i)
		}
		out[i] = *v * sc
	}
	return out, true, nil
}

// count reads metric key as a token count.
func (r *aiperfRecord) count(key string) (int, bool, error) {
	m, ok := r.Metrics[key]
	if !ok {
		return 0, false, nil
	}
	var v float64
	if err := json.Unmarshal(m.Value, &v); err != nil || string(m.Value) == "null" || v < 0 || v != math.Trunc(v) || v > 1<<40 {
		return 0, true, fmt.Errorf("metrics.%s.value: expected a token count, got %s", key, firstRunes(m.Value, 40))
	}
	return int(v), true, nil
}

func parseAIPerf(name string, data []byte) ([]Recording, error) {
	rec := Recording{Name: baseName(name)}
	type sent struct {
		at     int64
		stream int // index in rec.Streams, -1 for a failed request
	}
	var starts []sent
	warmup := 0
	records := 0
	for l := range nonBlankLines(data) {
		records++
		where := fmt.Sprintf("line %d", l.num)
		var r aiperfRecord
		dec := json.NewDecoder(bytes.NewReader(l.text))
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", name, jsonError(data, int64(l.off), err))
		}
		if rest := bytes.TrimSpace(l.text[dec.InputOffset():]); len(rest) > 0 {
			return nil, fmt.Errorf("%s: %s: unexpected data after the record: one JSON object per line expected", name, where)
		}
		if err := checkDuplicateKeys(name, data, l.text, int64(l.off)); err != nil {
			return nil, err
		}
		if r.Metadata != nil && r.Metadata.CreditPhase == "warmup" {
			warmup++
			continue
		}
		if r.Metadata == nil || r.Metadata.TimestampNS == nil {
			return nil, fmt.Errorf("%s: %s: expected metadata.timestamp_ns (when the request was sent)", name, where)
		}
		at := *r.Metadata.TimestampNS
		if r.Error != nil {
			kind := r.Error.Type
			if kind == "" {
				kind = "error " + string(r.Error.Code)
			}
			rec.fail(kind)
			starts = append(starts, sent{at, -1})
			continue
		}
		if r.Metrics == nil {
			return nil, fmt.Errorf("%s: %s: no metrics and no error", name, where)
		}
		s := Stream{ID: records - 1}
		ttft, ok, err := r.time("ttft")
		if err == nil && !ok {
			err = fmt.Errorf("metrics.ttft: missing: a request without error must have a time to first token")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, where, err)
		}
		gaps, _, err := r.times("inter_chunk_latency")
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, where, err)
		}
		s.TTFT, s.Gaps, s.Chunks = ttft, gaps, len(gaps)+1
		if s.Gaps == nil {
			s.Gaps = []float64{}
		}
		e2el := ttft
		for _, g := range gaps {
			e2el += g
		}
		s.E2EL = e2el
		if s.InputTokens, _, err = r.count("input_sequence_length"); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, where, err)
		}
		osl, ok, err := r.count("output_sequence_length")
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, where, err)
		}
		if !ok {
			out, ok1, err1 := r.count("output_token_count")
			reason, ok2, err2 := r.count("reasoning_token_count")
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, where, cmpErr(err1, err2))
			}
			osl = out + reason
			if !ok1 && !ok2 {
				osl = s.Chunks
			}
		}
		s.OutputTokens = osl
		if err := checkStream(where, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		starts = append(starts, sent{at, len(rec.Streams)})
		rec.Streams = append(rec.Streams, s)
	}
	if records == 0 {
		return nil, fmt.Errorf("%s: empty file: expected one JSON record per line", name)
	}
	if warmup > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d warmup records skipped", warmup))
	}
	if len(starts) > 0 {
		t0 := starts[0].at
		for _, s := range starts {
			t0 = min(t0, s.at)
		}
		for _, s := range starts {
			if s.stream < 0 {
				continue
			}
			st := &rec.Streams[s.stream]
			d := s.at - t0 // both are ns since the epoch: exact in int64
			if d < 0 || d >= maxNS {
				return nil, fmt.Errorf("%s: record %d: sent %d ns after the first request: timestamps more than %d days apart", name, st.ID+1, d, maxDays)
			}
			st.Arrival = float64(d)
		}
		rec.Duration = span(rec.Streams)
	}
	return []Recording{rec}, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
