package workloads

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Column names a lengths file must have, as in the processed traces of
// Vidur and Sarathi-Serve (data/processed_traces/*.csv).
const (
	ColumnInput  = "num_prefill_tokens"
	ColumnOutput = "num_decode_tokens"
)

// Lengths is a table of (input, output) token-count pairs read from a
// length-only CSV. It keeps only those two columns, as int32 pairs.
type Lengths struct {
	pairs []int32 // input, output, input, output, ...
}

// ReadLengths reads a lengths file; see ParseLengths for the format. Errors
// name the file and line.
func ReadLengths(path string) (*Lengths, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError already names the file
	}
	defer f.Close()
	return ParseLengths(f, path)
}

// ParseLengths reads a CSV whose header row names the columns
// num_prefill_tokens and num_decode_tokens (in any position; other columns
// are ignored) and whose every other row holds a positive integer in each.
// An integral decimal such as "74.0" counts as an integer, as pandas writes
// them. name labels the errors: "name:LINE: what was expected, got what".
func ParseLengths(r io.Reader, name string) (*Lengths, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.ReuseRecord = true

	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file, expected a header with columns %s,%s", name, ColumnInput, ColumnOutput)
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	width := len(header)
	in, out := -1, -1
	for i, col := range header {
		col = strings.TrimSpace(col)
		if i == 0 {
			col = strings.TrimPrefix(col, "\ufeff") // a byte-order mark from spreadsheet exports
		}
		var dst *int
		switch col {
		case ColumnInput:
			dst = &in
		case ColumnOutput:
			dst = &out
		default:
			continue
		}
		if *dst >= 0 {
			return nil, fmt.Errorf("%s:1: duplicate column %s", name, col)
		}
		*dst = i
	}
	for _, c := range []struct {
		idx  int
		name string
	}{{in, ColumnInput}, {out, ColumnOutput}} {
		if c.idx < 0 {
			return nil, fmt.Errorf("%s:1: missing column %s", name, c.name)
		}
	}

	l := &Lengths{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, fmt.Errorf("%s:%d: expected %d fields as in the header, got %d", name, line, width, len(rec))
		}
		inLen, err := parseCount(rec[in])
		if err != nil {
			line, _ = cr.FieldPos(in)
			return nil, fmt.Errorf("%s:%d: %s: %w", name, line, ColumnInput, err)
		}
		outLen, err := parseCount(rec[out])
		if err != nil {
			line, _ = cr.FieldPos(out)
			return nil, fmt.Errorf("%s:%d: %s: %w", name, line, ColumnOutput, err)
		}
		l.pairs = append(l.pairs, inLen, outLen)
	}
	if len(l.pairs) == 0 {
		line, _ := cr.FieldPos(0)
		return nil, fmt.Errorf("%s:%d: no data rows after the header", name, line)
	}
	return l, nil
}

// csvError rewrites a *csv.ParseError as "name:LINE: problem".
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: malformed CSV: %w", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseCount reads a positive token count that fits an int32.
func parseCount(s string) (int32, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		x, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || x != math.Trunc(x) || math.Abs(x) > MaxLength {
			return 0, fmt.Errorf("expected a positive integer, got %s", quoted(s))
		}
		n = int64(x)
	}
	if n < 1 || n > MaxLength {
		return 0, fmt.Errorf("expected a positive integer ≤ %d, got %s", MaxLength, quoted(s))
	}
	return int32(n), nil
}

// Len returns the number of pairs.
func (l *Lengths) Len() int { return len(l.pairs) / 2 }

// At returns pair i, 0 ≤ i < Len().
func (l *Lengths) At(i int) (input, output int) {
	return int(l.pairs[2*i]), int(l.pairs[2*i+1])
}

// Max returns the largest input and the largest output length in the table,
// for checking them against a model's context.
func (l *Lengths) Max() (input, output int) {
	for i := 0; i < len(l.pairs); i += 2 {
		input = max(input, int(l.pairs[i]))
		output = max(output, int(l.pairs[i+1]))
	}
	return input, output
}

// MaxTotal returns the largest input+output of any one pair, the most
// context a request from this table needs.
func (l *Lengths) MaxTotal() int {
	total := 0
	for i := 0; i < len(l.pairs); i += 2 {
		total = max(total, int(l.pairs[i])+int(l.pairs[i+1]))
	}
	return total
}

// Mean returns the mean input and output length over the table.
func (l *Lengths) Mean() (input, output float64) {
	var si, so float64
	for i := 0; i < len(l.pairs); i += 2 {
		si += float64(l.pairs[i])
		so += float64(l.pairs[i+1])
	}
	n := float64(l.Len())
	return si / n, so / n
}

// LengthFilterVLLMShareGPT is vLLM bench's ShareGPT filter
// (vllm/benchmarks/datasets.py, is_valid_sequence with its defaults): a
// pair is kept when the prompt and the output have at least 4 tokens, the
// prompt at most 1024 and both together at most 2048.
const LengthFilterVLLMShareGPT = "vllm-sharegpt"

// lengthFilters are the filters lengths_filter names; "" keeps every pair.
var lengthFilters = map[string]func(in, out int) bool{
	"": nil,
	LengthFilterVLLMShareGPT: func(in, out int) bool {
		return in >= 4 && out >= 4 && in <= 1024 && in+out <= 2048
	},
}

// LengthFilters are the names lengths_filter accepts.
func LengthFilters() []string { return []string{LengthFilterVLLMShareGPT} }

// Filter returns the table of the pairs the named filter (LengthFilters)
// keeps; "" keeps them all (l itself).
// name labels the error when no pair is left.
func (l *Lengths) Filter(name, filter string) (*Lengths, error) {
	keep := lengthFilters[filter]
	if keep == nil {
		return l, nil
	}
	out := &Lengths{}
	for i := range l.Len() {
		if in, o := l.At(i); keep(in, o) {
			out.pairs = append(out.pairs, int32(in), int32(o))
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s: no pair of its %d passes lengths_filter %s", name, l.Len(), filter)
	}
	return out, nil
}
