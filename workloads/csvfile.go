package workloads

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// csvFile reads a CSV file with a header row, finding columns by name
// (case-insensitively, ignoring surrounding spaces and a byte-order mark).
// It reads one row at a time.
type csvFile struct {
	name  string
	cr    *csv.Reader
	width int
	rec   []string
}

// column is a column to find in a header; idx is filled by openCSV and is
// -1 for an optional column the header lacks.
type column struct {
	name     string
	required bool
	idx      int
}

// newCSV reads the header of r.
func newCSV(r io.Reader, name string, cols []*column) (*csvFile, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1 // checked per row, with a clearer message
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file, expected a header with columns %s", name, columnList(cols))
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	for _, c := range cols {
		c.idx = -1
	}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		}
		for _, c := range cols {
			if strings.EqualFold(h, c.name) {
				if c.idx >= 0 {
					return nil, fmt.Errorf("%s:1: duplicate column %s", name, c.name)
				}
				c.idx = i
			}
		}
	}
	for _, c := range cols {
		if c.required && c.idx < 0 {
			return nil, fmt.Errorf("%s:1: missing column %s (the header is %s)", name, c.name, quoted(strings.Join(header, ",")))
		}
	}
	return &csvFile{name: name, cr: cr, width: len(header)}, nil
}

// maxQuoted caps the characters of a file's text a message quotes.
const maxQuoted = 200

// quoted quotes text read from a file for a message, escaped as %q does,
// cut after maxQuoted characters with "…": a header or a cell can be
// megabytes long, or binary.
func quoted(s string) string {
	n := 0
	for i := range s {
		if n == maxQuoted {
			return fmt.Sprintf("%q…", s[:i])
		}
		n++
	}
	return fmt.Sprintf("%q", s)
}

func columnList(cols []*column) string {
	var names []string
	for _, c := range cols {
		if c.required {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ",")
}

// read returns the next row, or false at the end of the file. A row with a
// different number of fields than the header is an error.
func (t *csvFile) read() (bool, error) {
	rec, err := t.cr.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, csvError(t.name, err)
	}
	if len(rec) != t.width {
		line, _ := t.cr.FieldPos(0)
		return false, fmt.Errorf("%s:%d: expected %d fields as in the header, got %d", t.name, line, t.width, len(rec))
	}
	t.rec = rec
	return true, nil
}

// field returns the current row's value of column c ("" when the header
// lacks it).
func (t *csvFile) field(c *column) string {
	if c.idx < 0 {
		return ""
	}
	return t.rec[c.idx]
}

// errorf reports a problem with column c of the current row.
func (t *csvFile) errorf(c *column, format string, args ...any) error {
	line, _ := t.cr.FieldPos(max(c.idx, 0))
	return fmt.Errorf("%s:%d: %s: %s", t.name, line, c.name, fmt.Sprintf(format, args...))
}

// line returns the line of the current row.
func (t *csvFile) line() int {
	line, _ := t.cr.FieldPos(0)
	return line
}

// count reads a token count: a positive integer up to MaxLength; an
// integral decimal such as "74.0" counts, as pandas writes them.
func (t *csvFile) count(c *column) (int, error) {
	n, err := parseCount(t.field(c))
	if err != nil {
		return 0, t.errorf(c, "%v", err)
	}
	return int(n), nil
}

// maxTraceNs bounds a trace's relative times (as Validate bounds a
// generated workload's horizon).
const maxTraceNs = maxHorizonS * 1e9

// parseTimeUnits reads a non-negative decimal time in units of 10^digits
// ns (9: seconds, 6: milliseconds) into ns. A plain decimal is converted
// exactly, digit by digit, so a time written with nanosecond precision
// reads back unchanged; exponent forms go through float64 and are rounded.
func parseTimeUnits(b []byte, digits int) (int64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	var whole, frac int64
	i, fracDigits, any := 0, 0, false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		whole = whole*10 + int64(b[i]-'0')
		if whole > maxTraceNs {
			return 0, false
		}
		any = true
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if fracDigits < digits {
				frac = frac*10 + int64(b[i]-'0')
				fracDigits++
			} // digits beyond a nanosecond are dropped
			any = true
		}
	}
	if i < len(b) || !any {
		if i < len(b) && (b[i] == 'e' || b[i] == 'E') && any {
			x, err := strconv.ParseFloat(string(b), 64)
			if err != nil || !(x >= 0) {
				return 0, false
			}
			ns := x * math.Pow10(digits)
			if !(ns <= maxTraceNs) {
				return 0, false
			}
			return int64(math.Round(ns)), true
		}
		return 0, false
	}
	for ; fracDigits < digits; fracDigits++ {
		frac *= 10
	}
	if whole > maxTraceNs/pow10i(digits) {
		return 0, false
	}
	ns := whole*pow10i(digits) + frac
	if ns > maxTraceNs {
		return 0, false
	}
	return ns, true
}

func pow10i(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// parseCountBytes is parseCount for bytes, allocating only on error.
func parseCountBytes(b []byte) (int32, error) {
	var n int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && n <= MaxLength; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == len(b) && i > 0 && n >= 1 && n <= MaxLength {
		return int32(n), nil
	}
	return parseCount(string(b))
}

// parseUintBytes reads a decimal uint64 (no sign, no fraction).
func parseUintBytes(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
