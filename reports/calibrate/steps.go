package calibrate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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

// Select names the setup whose rows a profile that holds several (Splitwise's
// perf_model.csv) contributes: itlsim's model and GPU preset names and the
// tensor-parallel degree.
type Select struct {
	Model, GPU string
	TP         int
}

// ReadSteps reads step timings from a CSV file with a header. Three forms:
//
//   - itlsim's: prefill_tokens, decode_seqs, decode_context, duration_ms,
//     and optionally prefill_context (Σ chunk × context attended) and
//     prefill_seqs;
//   - Sarathi-Serve's profiles (figure-2_decode.csv, figure-2_prefill.csv):
//     batch_num_prefill_tokens, batch_num_decode_tokens,
//     batch_execution_time in seconds; decode context is not recorded and
//     is taken as 0, so a fit cannot tell context cost from sequence cost;
//   - Splitwise's perf_model.csv (splitwise-sim data/perf_model.csv):
//     model, hardware, tensor_parallel, prompt_size, batch_size, token_size,
//     prompt_time and token_time in ms, several setups in one file; only the
//     rows of sel's model, GPU and TP are read (see [readSplitwise]).
//
// A missing column, a non-number, NaN, an infinity, a negative value or
// one above maxStepValue is an error naming the file, line and column.
func ReadSteps(path string, sel Select) ([]Step, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseSteps(path, data, sel)
}

// maxStepValue bounds every number of a step-timing file: 10⁹ tokens,
// sequences or milliseconds (11 days) per step is beyond any measurement,
// and keeps a chunk's tokens × context (up to 10¹⁸) inside int64.
const maxStepValue = 1e9

// stepValue parses one number of a step-timing file: finite, in
// [0, maxStepValue]. NaN fails every comparison, so the test is written to
// let only numbers inside the range through.
func stepValue(path string, line int, name, field string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
	if err != nil || !(v >= 0 && v <= maxStepValue) {
		return 0, fmt.Errorf("%s: line %d: %s: expected a number in [0, %g], got %q", path, line, name, float64(maxStepValue), field)
	}
	return v, nil
}

// ParseSteps is [ReadSteps] over a file's bytes; path names it in messages.
func ParseSteps(path string, data []byte, sel Select) ([]Step, []string, error) {
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
	if has(col, "prompt_time") && has(col, "token_time") {
		return readSplitwise(path, r, col, sel)
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
		return stepValue(path, line, name, rec[i])
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

// splitwiseNames maps Splitwise's model and hardware names to itlsim's
// presets; rows of parts without a preset (BLOOM-176B, the power-capped
// H100) cannot be selected.
var splitwiseNames = map[string]string{
	"llama2-70b": "llama-2-70b",
	"a100-80gb":  "a100-80gb",
	"h100-80gb":  "h100-sxm-80gb",
}

// readSplitwise turns each selected row of Splitwise's perf_model.csv into
// two steps: the prompt phase, batch_size prompts of prompt_size tokens
// prefilled whole in prompt_time ms, and a token-phase iteration,
// batch_size sequences decoding in token_time ms at a context of
// prompt_size + token_size/2 each (the mean over the token_size tokens
// generated; the file records the iteration time, not the context it was
// taken at). The e2e_time column is not used (the data's README calls it
// inconsistent).
func readSplitwise(path string, r *csv.Reader, col map[string]int, sel Select) ([]Step, []string, error) {
	for _, c := range []string{"model", "hardware", "tensor_parallel", "prompt_size", "batch_size", "token_size"} {
		if !has(col, c) {
			return nil, nil, fmt.Errorf("%s: line 1: Splitwise profile without a %q column; expected model, hardware, tensor_parallel, prompt_size, batch_size, token_size, prompt_time, token_time", path, c)
		}
	}
	field := func(rec []string, line int, name string) (string, error) {
		i := col[name]
		if i >= len(rec) {
			return "", fmt.Errorf("%s: line %d: %s: missing value", path, line, name)
		}
		return strings.TrimSpace(rec[i]), nil
	}
	num := func(rec []string, line int, name string) (float64, error) {
		f, err := field(rec, line, name)
		if err != nil {
			return 0, err
		}
		return stepValue(path, line, name, f)
	}
	seen := map[string]bool{}
	var setups []string
	var steps []Step
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %v", path, line, err)
		}
		mName, err1 := field(rec, line, "model")
		hName, err2 := field(rec, line, "hardware")
		tp, err3 := num(rec, line, "tensor_parallel")
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, nil, err
		}
		m, h := splitwiseNames[mName], splitwiseNames[hName]
		if m != "" && h != "" {
			if key := fmt.Sprintf("--model %s --gpu %s --tp %d", m, h, int(tp)); !seen[key] {
				seen[key] = true
				setups = append(setups, key)
			}
		}
		if m != sel.Model || h != sel.GPU || int(tp) != sel.TP {
			continue
		}
		p, err1 := num(rec, line, "prompt_size")
		b, err2 := num(rec, line, "batch_size")
		t, err3 := num(rec, line, "token_size")
		pms, err4 := num(rec, line, "prompt_time")
		tms, err5 := num(rec, line, "token_time")
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return nil, nil, err
		}
		if b < 1 || p < 1 || pms <= 0 || tms <= 0 {
			return nil, nil, fmt.Errorf("%s: line %d: expected batch_size and prompt_size ≥ 1 and positive prompt_time and token_time, got %v, %v, %v, %v", path, line, b, p, pms, tms)
		}
		if b*p > maxStepValue {
			return nil, nil, fmt.Errorf("%s: line %d: batch_size × prompt_size: expected at most %g tokens in a step, got %g", path, line, float64(maxStepValue), b*p)
		}
		var pre cost.Batch
		pre.PrefillSeqs = int(b)
		pre.PrefillTokens = int64(b * p)
		pre.PrefillTokCtx = int64(b * p * p)
		pre.PrefillAttn = (pre.PrefillTokCtx + pre.PrefillTokens) / 2
		pre.PrefillContext = pre.PrefillTokens
		dec := cost.Batch{DecodeSeqs: int(b), DecodeContext: int64(b * (p + t/2))}
		steps = append(steps, Step{Line: line, Batch: pre, MS: pms}, Step{Line: line, Batch: dec, MS: tms})
	}
	if len(steps) == 0 {
		if len(setups) == 0 {
			return nil, nil, fmt.Errorf("%s: Splitwise profile without rows of a model and GPU itlsim has presets for", path)
		}
		return nil, nil, fmt.Errorf("%s: Splitwise profile has no rows for --model %s --gpu %s --tp %d; it has: %s", path, sel.Model, sel.GPU, sel.TP, strings.Join(setups, "; "))
	}
	notes := []string{fmt.Sprintf("Splitwise profile: %d rows of %s on %d × %s, a prompt-phase and a token-phase step each; token-phase context taken as prompt_size + token_size/2", len(steps)/2, sel.Model, sel.TP, sel.GPU)}
	return steps, notes, nil
}

func has(col map[string]int, name string) bool { _, ok := col[name]; return ok }
