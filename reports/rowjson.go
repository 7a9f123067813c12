package reports

import (
	"encoding/json"
	"math"
	"strconv"
)

// appendRowJSON appends row as json.MarshalIndent(row, prefix, "  ")
// writes it, byte for byte, without reflection: a million-row --json file
// spent most of its time in the encoder's reflection and its second,
// indenting pass. Floats are written as encoding/json writes them (the
// shortest representation, exponent form outside [1e-6, 1e21)); strings
// that need escaping, and anything the encoder refuses (NaN, ±Inf), go
// through encoding/json itself, so the bytes and the errors are its own.
// TestRowJSONIsMarshalIndent holds the two together.
func appendRowJSON(b []byte, row *StreamRow, prefix string) ([]byte, error) {
	w := rowWriter{b: b, nl: "\n" + prefix + "  "}
	w.b = append(w.b, '{')
	w.int("id", row.ID)
	w.str("status", row.Status)
	if row.RejectReason != "" {
		w.str("reject_reason", row.RejectReason)
	}
	w.float("arrival_s", row.ArrivalS)
	w.int("input_tokens", row.InputTokens)
	w.int("output_tokens", row.OutputTokens)
	w.float(rowKeys.ttft, row.TTFTMS)
	w.float(rowKeys.tpot, row.TPOTMS)
	w.float(rowKeys.e2el, row.E2ELMS)
	w.int("chunks", row.Chunks)
	w.float("itl_mean_ms", row.ITLMeanMS)
	w.float(rowKeys.itlP50, row.ITLP50MS)
	w.float("itl_p90_ms", row.ITLP90MS)
	w.float(rowKeys.itlP99, row.ITLP99MS)
	w.float(rowKeys.maxGap, row.MaxGapMS)
	w.float(rowKeys.jitter, row.JitterRatio)
	w.int("stalls", row.Stalls)
	w.float("stall_ms", row.StallMS)
	w.key("stall_causes")
	switch {
	case row.StallCauses == nil:
		w.b = append(w.b, "null"...)
	case len(row.StallCauses) == 0:
		w.b = append(w.b, "[]"...)
	default:
		w.b = append(w.b, '[')
		for i, c := range row.StallCauses {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, w.nl...)
			w.b = append(w.b, "  "...)
			w.quote(c)
		}
		w.b = append(w.b, w.nl...)
		w.b = append(w.b, ']')
	}
	w.int("preemptions", row.Preemptions)
	if row.Class != "" {
		w.str("class", row.Class)
	}
	if row.QoE != nil {
		w.float(rowKeys.qoe, *row.QoE)
	}
	if row.Fluidity != nil {
		w.float(rowKeys.fluidity, *row.Fluidity)
	}
	if row.FluidRate != nil {
		w.float("fluid_tokens_per_s", *row.FluidRate)
	}
	w.b = append(w.b, '\n')
	w.b = append(w.b, prefix...)
	w.b = append(w.b, '}')
	return w.b, w.err
}

type rowWriter struct {
	b     []byte
	nl    string // newline and the indent of a key
	comma bool
	err   error
}

func (w *rowWriter) key(k string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(w.b, w.nl...)
	w.b = append(w.b, '"')
	w.b = append(w.b, k...) // keys are plain ASCII
	w.b = append(w.b, `": `...)
}

func (w *rowWriter) int(k string, v int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

func (w *rowWriter) str(k, v string) {
	w.key(k)
	w.quote(v)
}

// quote appends s as a JSON string: directly when no byte needs escaping
// (printable ASCII but for the quote, the backslash and the HTML
// characters encoding/json escapes), else through encoding/json.
func (w *rowWriter) quote(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil && w.err == nil {
				w.err = err
			}
			w.b = append(w.b, q...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// float appends v as encoding/json writes a float64.
func (w *rowWriter) float(k string, v float64) {
	w.key(k)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if w.err == nil {
			_, w.err = json.Marshal(v) // the encoder's own error
		}
		w.b = append(w.b, "null"...)
		return
	}
	f := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	w.b = strconv.AppendFloat(w.b, v, f, -1, 64)
	if f == 'e' {
		// e-09 becomes e-9, as the encoder writes it.
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}
