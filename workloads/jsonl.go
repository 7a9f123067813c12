package workloads

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// lineReader reads a text file line by line, skipping blank lines and
// counting line numbers. A line may be of any length.
type lineReader struct {
	name string
	br   *bufio.Reader
	line int
	long []byte // a line longer than the buffer, assembled
}

func newLines(r io.Reader, name string) *lineReader {
	return &lineReader{name: name, br: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next non-blank line without its end, valid until the
// next call, or nil at the end of the file.
func (l *lineReader) next() ([]byte, error) {
	for {
		b, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = l.br.ReadSlice('\n')
				l.long = append(l.long, b...)
			}
			b = l.long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", l.name, l.line+1, err)
		}
		if len(b) == 0 && err == io.EOF {
			return nil, nil
		}
		l.line++
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		b = bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(b)) > 0 {
			return b, nil
		}
		if err == io.EOF {
			return nil, nil
		}
	}
}

// errAt names the current line, and the field when there is one, in a
// reader's error: "file:line: field: problem".
func (l *lineReader) errAt(field string, err error) error {
	if field == "" {
		return fmt.Errorf("%s:%d: %w", l.name, l.line, err)
	}
	return fmt.Errorf("%s:%d: %s: %w", l.name, l.line, field, err)
}

// jsonRecords is what the JSON-lines request readers (itlsim's format,
// Mooncake's) share: the file's lines, a scanner over the current one, and
// the prefix block ids read from it. Each reader reads its own keys between
// begin and finish:
//
//	sc, err := j.begin(r)
//	if sc == nil {
//		return false, err
//	}
//	for sc.more() {
//		key, err := sc.key()
//		... switch on key ...
//	}
//	if err := j.finish(seen, names); err != nil { ... }
type jsonRecords struct {
	lines      *lineReader
	sc         jsonScanner
	ids        []uint64
	arena      blockArena
	keepPrefix bool
}

func newJSONRecords(r io.Reader, name string, keepPrefix bool) jsonRecords {
	return jsonRecords{lines: newLines(r, name), keepPrefix: keepPrefix}
}

// begin reads the next line and opens its object, clearing r and the ids
// for the record. It returns the scanner before the first key, or nil with
// the error (nil at the end of the file).
func (j *jsonRecords) begin(r *Request) (*jsonScanner, error) {
	line, err := j.lines.next()
	if err != nil || line == nil {
		return nil, err
	}
	*r = Request{}
	j.ids = j.ids[:0]
	j.sc.reset(line)
	if err := j.sc.open(); err != nil {
		return nil, j.lines.errAt("", err)
	}
	return &j.sc, nil
}

// finish checks that the object closes the line and that the record's three
// required fields (names) were all seen.
func (j *jsonRecords) finish(seen [3]bool, names [3]string) error {
	if err := j.sc.end(); err != nil {
		return j.lines.errAt("", err)
	}
	for i, name := range names {
		if !seen[i] {
			return j.lines.errAt("", fmt.Errorf("missing field %s", name))
		}
	}
	return nil
}

// mooncakeBlockTokens is the prompt tokens one Mooncake hash id covers.
const mooncakeBlockTokens = 512

// mooncakeReader reads Mooncake's JSONL traces (FAST'25 release), one
// request per line:
//
//	{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
//
// timestamp is the arrival in milliseconds (an integer or a decimal);
// input_length and output_length are positive token counts; hash_ids, one
// per 512-token block of the prompt (equal ids are equal prefixes), become
// PrefixBlocks. Keys may come in any order; other keys are ignored;
// hash_ids may be absent or null.
type mooncakeReader struct {
	jsonRecords
}

func newMooncake(r io.Reader, name string, keepPrefix bool) (recordReader, error) {
	return &mooncakeReader{newJSONRecords(r, name, keepPrefix)}, nil
}

func (m *mooncakeReader) next(r *Request) (bool, error) {
	sc, err := m.begin(r)
	if sc == nil {
		return false, err
	}
	at := m.lines.errAt
	var seen [3]bool
	for sc.more() {
		key, err := sc.key()
		if err != nil {
			return false, at("", err)
		}
		switch string(key) {
		case "timestamp":
			num, err := sc.number()
			if err != nil {
				return false, at("timestamp", err)
			}
			t, ok := parseTimeUnits(num, 6)
			if !ok {
				return false, at("timestamp", fmt.Errorf("expected milliseconds in [0, %g], got %s", maxHorizonS*1e3, num))
			}
			r.Arrival, seen[0] = t, true
		case "input_length", "output_length":
			isIn := key[0] == 'i'
			field := "output_length"
			if isIn {
				field = "input_length"
			}
			n, err := sc.count()
			if err != nil {
				return false, at(field, err)
			}
			if isIn {
				r.InputTokens, seen[1] = n, true
			} else {
				r.OutputTokens, seen[2] = n, true
			}
		case "hash_ids":
			if m.ids, err = sc.uints(m.ids); err != nil {
				return false, at("hash_ids", err)
			}
		default:
			if err := sc.skip(); err != nil {
				return false, at("", err)
			}
		}
	}
	if err := m.finish(seen, [3]string{"timestamp", "input_length", "output_length"}); err != nil {
		return false, err
	}
	if len(m.ids) > 0 {
		r.PrefixBlockTokens = mooncakeBlockTokens
		if m.keepPrefix {
			r.PrefixBlocks = m.arena.copyOf(m.ids)
		}
	}
	return true, nil
}
