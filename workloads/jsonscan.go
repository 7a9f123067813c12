package workloads

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScanner reads one JSON object (a line of a JSONL trace) member by
// member without allocating: keys and string values come back as byte
// slices (into the line, or into a scratch buffer when they hold escapes),
// numbers as their text. It accepts exactly the JSON grammar (RFC 8259) —
// FuzzJSONScanner holds it to encoding/json — with nesting up to
// maxJSONDepth.
//
//	sc.reset(line)
//	if err := sc.open(); err != nil { ... }
//	for sc.more() {
//		key, err := sc.key()
//		... sc.number(), sc.str(), sc.uints(dst) or sc.skip() ...
//	}
//	if err := sc.end(); err != nil { ... }
type jsonScanner struct {
	data    []byte
	i       int
	first   bool // no member read yet
	err     error
	scratch []byte // unescaped keys and strings
	// keys holds the object's keys read so far, end to end, and keyEnds
	// where each ends, so a key given twice is caught (encoding/json and
	// Python keep the last, other readers the first: the row is ambiguous).
	keys    []byte
	keyEnds []int
}

// errDuplicateKey is what key returns for a key the object already has.
var errDuplicateKey = errors.New("key appears twice")

const maxJSONDepth = 10000

var errJSONEnd = errors.New("unexpected end of line")

func (s *jsonScanner) reset(line []byte) {
	s.data, s.i, s.first, s.err = line, 0, true, nil
	s.keys, s.keyEnds = s.keys[:0], s.keyEnds[:0]
}

func (s *jsonScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// fail records the first syntax error, at a 1-based column.
func (s *jsonScanner) fail(format string, args ...any) error {
	if s.err == nil {
		s.err = fmt.Errorf("malformed JSON at column %d: %s", s.i+1, fmt.Sprintf(format, args...))
	}
	return s.err
}

func (s *jsonScanner) peek() (byte, bool) {
	s.ws()
	if s.i >= len(s.data) {
		return 0, false
	}
	return s.data[s.i], true
}

// open consumes the '{' that starts the object.
func (s *jsonScanner) open() error {
	c, ok := s.peek()
	if !ok {
		return s.fail("%v, expected an object", errJSONEnd)
	}
	if c != '{' {
		return s.fail("expected '{', got %q", c)
	}
	s.i++
	return nil
}

// more reports whether another member follows, consuming the ',' between
// members. It returns false at the closing '}' (which end consumes) or
// after an error.
func (s *jsonScanner) more() bool {
	if s.err != nil {
		return false
	}
	c, ok := s.peek()
	if !ok {
		s.fail("%v, expected '}'", errJSONEnd)
		return false
	}
	if c == '}' {
		return false
	}
	if !s.first {
		if c != ',' {
			s.fail("expected ',' or '}', got %q", c)
			return false
		}
		s.i++
	}
	s.first = false
	return true
}

// key reads a member's key of the top-level object and the ':' after it;
// a key the object already has is an error (errDuplicateKey).
func (s *jsonScanner) key() ([]byte, error) {
	k, err := s.keyText()
	if err != nil {
		return nil, err
	}
	start := 0
	for _, end := range s.keyEnds {
		if bytes.Equal(s.keys[start:end], k) {
			if s.err == nil {
				s.err = fmt.Errorf("column %d: %w: %q is given twice in the object (which value counts is ambiguous)", s.i, errDuplicateKey, k)
			}
			return nil, s.err
		}
		start = end
	}
	s.keys = append(s.keys, k...)
	s.keyEnds = append(s.keyEnds, len(s.keys))
	return k, nil
}

// keyText reads a key and the ':' after it.
func (s *jsonScanner) keyText() ([]byte, error) {
	if c, ok := s.peek(); !ok || c != '"' {
		return nil, s.fail("expected a quoted key")
	}
	k, err := s.stringBody()
	if err != nil {
		return nil, err
	}
	if c, ok := s.peek(); !ok || c != ':' {
		return nil, s.fail("expected ':' after a key")
	}
	s.i++
	return k, nil
}

// end consumes the closing '}' and checks nothing but spaces follow.
func (s *jsonScanner) end() error {
	if s.err != nil {
		return s.err
	}
	if c, ok := s.peek(); !ok || c != '}' {
		return s.fail("expected '}'")
	}
	s.i++
	s.ws()
	if s.i < len(s.data) {
		return s.fail("unexpected %q after the object", s.data[s.i])
	}
	return nil
}

// null consumes a null value and reports whether there was one.
func (s *jsonScanner) null() bool {
	if c, ok := s.peek(); ok && c == 'n' && s.literal("null") == nil {
		return true
	}
	return false
}

// number reads a number value and returns its text.
// count reads a number that must be a token count (a positive integer).
func (s *jsonScanner) count() (int, error) {
	num, err := s.number()
	if err != nil {
		return 0, err
	}
	n, err := parseCountBytes(num)
	return int(n), err
}

func (s *jsonScanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	if s.i < len(s.data) && s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case s.i < len(s.data) && s.data[s.i] >= '1' && s.data[s.i] <= '9':
		s.digits()
	default:
		s.i = start
		return nil, s.fail("expected a number")
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, s.fail("expected a digit after '.'")
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.fail("expected a digit in the exponent")
		}
	}
	return s.data[start:s.i], nil
}

func (s *jsonScanner) digits() int {
	n := 0
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// str reads a string value and returns its unescaped bytes, valid until
// the next call.
func (s *jsonScanner) str() ([]byte, error) {
	if c, ok := s.peek(); !ok || c != '"' {
		return nil, s.fail("expected a string")
	}
	return s.stringBody()
}

// stringBody reads a quoted string at s.i.
func (s *jsonScanner) stringBody() ([]byte, error) {
	s.i++ // the opening quote
	start := s.i
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return s.data[start : s.i-1], nil
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return nil, s.fail("control character %q in a string", c)
		}
		s.i++
	}
	return nil, s.fail("%v inside a string", errJSONEnd)
}

// escaped continues a string that holds escapes, unescaping into scratch.
// Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json does.
func (s *jsonScanner) escaped(start int) ([]byte, error) {
	s.scratch = append(s.scratch[:0], s.data[start:s.i]...)
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return s.scratch, nil
		case c < 0x20:
			return nil, s.fail("control character %q in a string", c)
		case c != '\\':
			s.scratch = append(s.scratch, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.data) {
			break
		}
		e := s.data[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			s.scratch = append(s.scratch, e)
		case 'b':
			s.scratch = append(s.scratch, '\b')
		case 'f':
			s.scratch = append(s.scratch, '\f')
		case 'n':
			s.scratch = append(s.scratch, '\n')
		case 'r':
			s.scratch = append(s.scratch, '\r')
		case 't':
			s.scratch = append(s.scratch, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.fail("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by \uDC00-\uDFFF is one rune.
				save := s.i
				if s.i+1 < len(s.data) && s.data[s.i] == '\\' && s.data[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							s.scratch = utf8.AppendRune(s.scratch, d)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			s.scratch = utf8.AppendRune(s.scratch, r)
		default:
			s.i -= 2
			return nil, s.fail("bad escape \\%c", e)
		}
	}
	return nil, s.fail("%v inside a string", errJSONEnd)
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

func (s *jsonScanner) literal(word string) error {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return s.fail("expected a value")
	}
	s.i += len(word)
	return nil
}

// uints reads an array of non-negative integers into dst[:0]; null gives
// an empty slice.
func (s *jsonScanner) uints(dst []uint64) ([]uint64, error) {
	dst = dst[:0]
	if s.null() {
		return dst, nil
	}
	if c, ok := s.peek(); !ok || c != '[' {
		return nil, s.fail("expected an array of integers")
	}
	s.i++
	if c, ok := s.peek(); ok && c == ']' {
		s.i++
		return dst, nil
	}
	for {
		num, err := s.number()
		if err != nil {
			return nil, err
		}
		v, ok := parseUintBytes(num)
		if !ok {
			return nil, fmt.Errorf("element %d: expected an integer in [0, 2^64), got %s", len(dst)+1, num)
		}
		dst = append(dst, v)
		c, ok := s.peek()
		if !ok {
			return nil, s.fail("%v inside an array", errJSONEnd)
		}
		s.i++
		if c == ']' {
			return dst, nil
		}
		if c != ',' {
			s.i--
			return nil, s.fail("expected ',' or ']' in an array, got %q", c)
		}
	}
}

// skip reads any value.
func (s *jsonScanner) skip() error { return s.skipDepth(0) }

func (s *jsonScanner) skipDepth(depth int) error {
	if depth > maxJSONDepth {
		return s.fail("nested too deeply")
	}
	c, ok := s.peek()
	if !ok {
		return s.fail("%v, expected a value", errJSONEnd)
	}
	switch {
	case c == '"':
		_, err := s.stringBody()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '[':
		s.i++
		if c, ok := s.peek(); ok && c == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skipDepth(depth + 1); err != nil {
				return err
			}
			c, ok := s.peek()
			if !ok {
				return s.fail("%v inside an array", errJSONEnd)
			}
			s.i++
			if c == ']' {
				return nil
			}
			if c != ',' {
				s.i--
				return s.fail("expected ',' or ']' in an array, got %q", c)
			}
		}
	case c == '{':
		s.i++
		if c, ok := s.peek(); ok && c == '}' {
			s.i++
			return nil
		}
		for {
			if _, err := s.keyText(); err != nil {
				return err
			}
			if err := s.skipDepth(depth + 1); err != nil {
				return err
			}
			c, ok := s.peek()
			if !ok {
				return s.fail("%v inside an object", errJSONEnd)
			}
			s.i++
			if c == '}' {
				return nil
			}
			if c != ',' {
				s.i--
				return s.fail("expected ',' or '}' in an object, got %q", c)
			}
		}
	}
	return s.fail("expected a value, got %q", c)
}
