package workloads

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Columns (CSV) and keys (JSONL) of itlsim's request format.
const (
	colArrivalS          = "arrival_s"
	colInputTokens       = "input_tokens"
	colOutputTokens      = "output_tokens"
	colClass             = "class"
	colPriority          = "priority"
	colPrefixBlocks      = "prefix_blocks"
	colPrefixBlockTokens = "prefix_block_tokens"
)

// itlsim's request format holds one request per row, in JSON lines (a
// file ending in .jsonl, .ndjson or .json) or CSV (any other name):
//
//	{"arrival_s":0.000000000,"input_tokens":512,"output_tokens":128}
//	{"arrival_s":0.250000000,"input_tokens":900,"output_tokens":64,"class":"rag","priority":1,"prefix_blocks":[7,8],"prefix_block_tokens":512}
//
//	arrival_s,input_tokens,output_tokens,class,priority,prefix_blocks,prefix_block_tokens
//	0.000000000,512,128,,0,,
//	0.250000000,900,64,rag,1,7 8,512
//
// arrival_s is the arrival in seconds, written with nine decimals so a
// round trip keeps every nanosecond; input_tokens and output_tokens are
// positive token counts. The rest is optional: class a name, priority an
// integer (lower is more important), prefix_blocks the prompt's prefix
// block ids (a JSON array, or space-separated in CSV) and
// prefix_block_tokens the tokens each id covers (required with ids). (A
// class name holding a carriage return survives only JSON lines: CSV
// readers turn a quoted CR LF into LF.)
// WriteRequests writes it; `itlsim workload generate` uses WriteRequests.

// isJSONName reports whether a file name says JSON lines.
func isJSONName(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson", ".json":
		return true
	}
	return false
}

func newItlsim(r io.Reader, name string, keepPrefix bool) (recordReader, error) {
	if isJSONName(name) {
		return &itlsimJSON{jsonRecords: newJSONRecords(r, name, keepPrefix), classes: interner{}}, nil
	}
	c := &itlsimCSV{keepPrefix: keepPrefix, classes: interner{}}
	c.cols = [7]column{
		{name: colArrivalS, required: true}, {name: colInputTokens, required: true},
		{name: colOutputTokens, required: true}, {name: colClass}, {name: colPriority},
		{name: colPrefixBlocks}, {name: colPrefixBlockTokens},
	}
	t, err := newCSV(r, name, []*column{&c.cols[0], &c.cols[1], &c.cols[2], &c.cols[3], &c.cols[4], &c.cols[5], &c.cols[6]})
	if err != nil {
		return nil, err
	}
	c.t = t
	return c, nil
}

// checkPrefix checks the pairing of prefix block ids and their size.
func checkPrefix(r *Request) error {
	switch {
	case len(r.PrefixBlocks) > 0 && r.PrefixBlockTokens == 0:
		return fmt.Errorf("%s: required with %s", colPrefixBlockTokens, colPrefixBlocks)
	case r.PrefixBlocks == nil && r.PrefixBlockTokens != 0:
		r.PrefixBlockTokens = 0 // a size without ids says nothing
	}
	return nil
}

type itlsimJSON struct {
	jsonRecords
	classes interner
}

func (j *itlsimJSON) next(r *Request) (bool, error) {
	sc, err := j.begin(r)
	if sc == nil {
		return false, err
	}
	at := j.lines.errAt
	var seen [3]bool
	for sc.more() {
		key, err := sc.key()
		if err != nil {
			return false, at("", err)
		}
		switch string(key) {
		case colArrivalS:
			num, err := sc.number()
			if err != nil {
				return false, at(colArrivalS, err)
			}
			t, ok := parseTimeUnits(num, 9)
			if !ok {
				return false, at(colArrivalS, fmt.Errorf("expected seconds in [0, %g], got %s", float64(maxHorizonS), num))
			}
			r.Arrival, seen[0] = t, true
		case colInputTokens, colOutputTokens:
			field := colOutputTokens
			if key[0] == 'i' {
				field = colInputTokens
			}
			n, err := sc.count()
			if err != nil {
				return false, at(field, err)
			}
			if field == colInputTokens {
				r.InputTokens, seen[1] = n, true
			} else {
				r.OutputTokens, seen[2] = n, true
			}
		case colClass:
			if sc.null() {
				r.Class = ""
				continue
			}
			s, err := sc.str()
			if err != nil {
				return false, at(colClass, err)
			}
			r.Class = j.classes.intern(s)
		case colPriority:
			num, err := sc.number()
			if err != nil {
				return false, at(colPriority, err)
			}
			p, err := parsePriority(string(num))
			if err != nil {
				return false, at(colPriority, err)
			}
			r.Priority = p
		case colPrefixBlocks:
			if j.ids, err = sc.uints(j.ids); err != nil {
				return false, at(colPrefixBlocks, err)
			}
		case colPrefixBlockTokens:
			n, err := sc.count()
			if err != nil {
				return false, at(colPrefixBlockTokens, err)
			}
			r.PrefixBlockTokens = n
		default:
			if err := sc.skip(); err != nil {
				return false, at("", err)
			}
		}
	}
	if err := j.finish(seen, [3]string{colArrivalS, colInputTokens, colOutputTokens}); err != nil {
		return false, err
	}
	if len(j.ids) > 0 {
		r.PrefixBlocks = j.ids // checked below, then copied or dropped
	}
	if err := checkPrefix(r); err != nil {
		return false, at("", err)
	}
	r.PrefixBlocks = nil
	if j.keepPrefix && len(j.ids) > 0 {
		r.PrefixBlocks = j.arena.copyOf(j.ids)
	}
	return true, nil
}

// parsePriority reads an integer priority.
func parsePriority(s string) (int, error) {
	s = trimSpace(s)
	if s == "" {
		return 0, nil
	}
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("expected an integer, got %s", quoted(s))
	}
	return int(p), nil
}

type itlsimCSV struct {
	t          *csvFile
	cols       [7]column // arrival, input, output, class, priority, blocks, block tokens
	ids        []uint64
	arena      blockArena
	classes    interner
	keepPrefix bool
}

func (c *itlsimCSV) next(r *Request) (bool, error) {
	ok, err := c.t.read()
	if !ok || err != nil {
		return false, err
	}
	*r = Request{}
	if r.Arrival, err = c.t.seconds(&c.cols[0]); err != nil {
		return false, err
	}
	if r.InputTokens, err = c.t.count(&c.cols[1]); err != nil {
		return false, err
	}
	if r.OutputTokens, err = c.t.count(&c.cols[2]); err != nil {
		return false, err
	}
	r.Class = c.classes.intern([]byte(trimSpace(c.t.field(&c.cols[3]))))
	if r.Priority, err = parsePriority(c.t.field(&c.cols[4])); err != nil {
		return false, c.t.errorf(&c.cols[4], "%v", err)
	}
	c.ids = c.ids[:0]
	for f := range strings.FieldsSeq(c.t.field(&c.cols[5])) {
		v, ok := parseUintBytes([]byte(f))
		if !ok {
			return false, c.t.errorf(&c.cols[5], "element %d: expected an integer in [0, 2^64), got %s", len(c.ids)+1, quoted(f))
		}
		c.ids = append(c.ids, v)
	}
	if s := trimSpace(c.t.field(&c.cols[6])); s != "" {
		if r.PrefixBlockTokens, err = c.t.count(&c.cols[6]); err != nil {
			return false, err
		}
	}
	if len(c.ids) > 0 {
		r.PrefixBlocks = c.ids
	}
	if err := checkPrefix(r); err != nil {
		return false, fmt.Errorf("%s:%d: %w", c.t.name, c.t.line(), err)
	}
	r.PrefixBlocks = nil
	if c.keepPrefix && len(c.ids) > 0 {
		r.PrefixBlocks = c.arena.copyOf(c.ids)
	}
	return true, nil
}

// RequestWriter writes requests in itlsim's request format: JSON lines or
// CSV. Call Flush at the end.
type RequestWriter struct {
	w    *bufio.Writer
	json bool
	buf  []byte
	n    int
}

// NewRequestWriter returns a writer of JSON lines (asJSON) or CSV.
func NewRequestWriter(w io.Writer, asJSON bool) *RequestWriter {
	return &RequestWriter{w: bufio.NewWriterSize(w, 1<<16), json: asJSON}
}

// NewRequestWriterFor picks the form from a file name as the reader does:
// JSON lines for .jsonl, .ndjson and .json, CSV otherwise.
func NewRequestWriterFor(w io.Writer, path string) *RequestWriter {
	return NewRequestWriter(w, isJSONName(path))
}

// Write writes one request. Arrivals are written in seconds with nine
// decimals, exactly.
func (w *RequestWriter) Write(r *Request) error {
	b := w.buf[:0]
	if !w.json && w.n == 0 {
		b = append(b, strings.Join([]string{colArrivalS, colInputTokens, colOutputTokens, colClass, colPriority,
			colPrefixBlocks, colPrefixBlockTokens}, ",")...)
		b = append(b, '\n')
	}
	w.n++
	secs := func(b []byte, ns int64) []byte {
		if ns < 0 {
			b = append(b, '-')
			ns = -ns
		}
		b = strconv.AppendInt(b, ns/1e9, 10)
		frac := ns % 1e9
		b = append(b, '.')
		for d := int64(1e8); d > 0; d /= 10 {
			b = append(b, byte('0'+frac/d%10))
		}
		return b
	}
	if w.json {
		b = append(b, `{"arrival_s":`...)
		b = secs(b, r.Arrival)
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, int64(r.InputTokens), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
		if r.Class != "" {
			b = append(b, `,"class":`...)
			b = appendJSONString(b, r.Class)
		}
		if r.Priority != 0 {
			b = append(b, `,"priority":`...)
			b = strconv.AppendInt(b, int64(r.Priority), 10)
		}
		if len(r.PrefixBlocks) > 0 {
			b = append(b, `,"prefix_blocks":[`...)
			for i, id := range r.PrefixBlocks {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendUint(b, id, 10)
			}
			b = append(b, `],"prefix_block_tokens":`...)
			b = strconv.AppendInt(b, int64(r.PrefixBlockTokens), 10)
		}
		b = append(b, "}\n"...)
	} else {
		b = secs(b, r.Arrival)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.InputTokens), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
		b = append(b, ',')
		b = appendCSVField(b, r.Class)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Priority), 10)
		b = append(b, ',')
		for i, id := range r.PrefixBlocks {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, id, 10)
		}
		b = append(b, ',')
		if len(r.PrefixBlocks) > 0 {
			b = strconv.AppendInt(b, int64(r.PrefixBlockTokens), 10)
		}
		b = append(b, '\n')
	}
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range strings.ToValidUTF8(s, "\ufffd") {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = utf8.AppendRune(b, c)
		}
	}
	return append(b, '"')
}

// appendCSVField quotes a field when CSV needs it.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") && strings.TrimSpace(s) == s {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// Flush writes out buffered data.
func (w *RequestWriter) Flush() error { return w.w.Flush() }

// WriteRequests drains src into w in itlsim's request format and returns
// how many requests it wrote. It reports the source's own error (Err) too.
func WriteRequests(w *RequestWriter, src Source) (int, error) {
	var r Request
	n := 0
	for src.Next(&r) {
		if err := w.Write(&r); err != nil {
			return n, err
		}
		n++
	}
	if err := Err(src); err != nil {
		return n, err
	}
	return n, w.Flush()
}
