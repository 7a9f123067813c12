package calibrate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/sim/cost"
)

// Step is one measured step: its batch and how long it took.
type Step struct {
	Line  int // line in the file, for messages
	Batch cost.Batch
	MS    float64
}

// ReadSteps reads step timings from a CSV file with a header. Two forms:
//
//   - itlsim's: prefill_tokens, decode_seqs, decode_context, duration_ms,
//     and optionally prefill_context (Σ chunk × context attended) and
//     prefill_seqs;
//   - Sarathi-Serve's profiles (figure-2_decode.csv, figure-2_prefill.csv):
//     batch_num_prefill_tokens, batch_num_decode_tokens,
//     batch_execution_time in seconds; decode context is not recorded and
//     is taken as 0, so a fit cannot tell context cost from sequence cost.
//
// A missing column, a non-number or a negative value is an error naming
// the file, line and column.
func ReadSteps(path string) ([]Step, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: expected a CSV header, got %v", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	var notes []string
	type spec struct{ prefill, seqs, ctx, dur, pctx, pseqs string }
	var s spec
	scale := 1.0
	switch {
	case has(col, "duration_ms"):
		s = spec{"prefill_tokens", "decode_seqs", "decode_context", "duration_ms", "prefill_context", "prefill_seqs"}
		for _, c := range []string{s.prefill, s.seqs, s.ctx} {
			if !has(col, c) {
				return nil, nil, fmt.Errorf("%s: line 1: no %q column; expected prefill_tokens, decode_seqs, decode_context, duration_ms", path, c)
			}
		}
	case has(col, "batch_execution_time") && has(col, "batch_num_prefill_tokens") && has(col, "batch_num_decode_tokens"):
		s = spec{prefill: "batch_num_prefill_tokens", seqs: "batch_num_decode_tokens", dur: "batch_execution_time"}
		scale = 1000 // seconds
		notes = append(notes, "Sarathi-Serve profile: decode context not recorded (taken as 0)")
	default:
		return nil, nil, fmt.Errorf("%s: line 1: expected columns prefill_tokens, decode_seqs, decode_context, duration_ms (or Sarathi-Serve's batch_num_prefill_tokens, batch_num_decode_tokens, batch_execution_time)", path)
	}
	get := func(rec []string, line int, name string, need bool) (float64, error) {
		i, ok := col[name]
		if !ok || name == "" {
			if need {
				return 0, fmt.Errorf("%s: line %d: no %q column", path, line, name)
			}
			return 0, nil
		}
		if i >= len(rec) {
			return 0, fmt.Errorf("%s: line %d: %s: missing value", path, line, name)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || v > 1e12 {
			return 0, fmt.Errorf("%s: line %d: %s: expected a number ≥ 0, got %q", path, line, name, rec[i])
		}
		return v, nil
	}
	var steps []Step
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %v", path, line, err)
		}
		p, err1 := get(rec, line, s.prefill, true)
		d, err2 := get(rec, line, s.seqs, true)
		c, err3 := get(rec, line, s.ctx, false)
		ms, err4 := get(rec, line, s.dur, true)
		pc, err5 := get(rec, line, s.pctx, false)
		ps, err6 := get(rec, line, s.pseqs, false)
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			return nil, nil, err
		}
		if ms*scale <= 0 {
			return nil, nil, fmt.Errorf("%s: line %d: %s: a step takes a positive time, got %s", path, line, s.dur, rec[col[s.dur]])
		}
		var b cost.Batch
		if p > 0 {
			b.PrefillSeqs = max(1, int(ps))
			b.PrefillTokens = int64(p)
			b.PrefillTokCtx = int64(pc)
			if pc == 0 { // one chunk from the start: c·c context
				b.PrefillTokCtx = int64(p * p)
			}
			b.PrefillAttn = (b.PrefillTokCtx + b.PrefillTokens) / 2
			b.PrefillContext = b.PrefillTokens
		}
		b.DecodeSeqs = int(d)
		b.DecodeContext = int64(c)
		steps = append(steps, Step{Line: line, Batch: b, MS: ms * scale})
	}
	if len(steps) == 0 {
		return nil, nil, fmt.Errorf("%s: no step rows after the header", path)
	}
	return steps, notes, nil
}

func has(col map[string]int, name string) bool { _, ok := col[name]; return ok }
