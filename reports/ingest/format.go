package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"slices"
	"strings"
)

// Format names an importer.
type Format string

// Formats.
const (
	// FormatVLLM is a vLLM benchmark result (vllm.go).
	FormatVLLM Format = "vllm"
	// FormatAIPerf is AIPerf's profile_export.jsonl (aiperf.go).
	FormatAIPerf Format = "aiperf"
	// FormatGuideLLM is GuideLLM's benchmark JSON (guidellm.go).
	FormatGuideLLM Format = "guidellm"
	// FormatStreams is itlsim's stream format (streams.go).
	FormatStreams Format = "itlsim"
)

// parser reads one format: name is the file's path for messages and labels.
type parser func(name string, data []byte) ([]Recording, error)

// parsers is the registry of importers; Formats derives from it.
var parsers = map[Format]parser{
	FormatVLLM:     parseVLLM,
	FormatAIPerf:   parseAIPerf,
	FormatGuideLLM: parseGuideLLM,
	FormatStreams:  parseStreams,
}

// Formats lists the importers' names, sorted.
func Formats() []string {
	var out []string
	for f := range parsers {
		out = append(out, string(f))
	}
	slices.Sort(out)
	return out
}

// ParseFormat checks a format name; "" and "auto" mean detect.
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return "", nil
	}
	if _, ok := parsers[Format(s)]; ok {
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown input format %q: must be auto, %s", s, strings.Join(Formats(), ", "))
}

// ErrDocument is returned by Detect for an itlsim results document (the
// JSON of `itlsim run --json`): it holds summaries, not chunk times.
var ErrDocument = errors.New("an itlsim results document (itlsim run --json), not a stream file: give it to itlsim gate, or analyze the file written by itlsim run --timelines")

// Detect names the format of data from its content: the keys of its first
// JSON value. name is used in messages only.
func Detect(name string, data []byte) (Format, error) {
	trimmed := bytes.TrimSpace(TrimBOM(data))
	if len(trimmed) == 0 {
		return "", fmt.Errorf("%s: empty file", name)
	}
	if trimmed[0] != '{' {
		return "", fmt.Errorf("%s: not JSON or JSON lines: expected '{' at the start, got %q", name, firstRunes(trimmed, 20))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys map[string]json.RawMessage
	if err := dec.Decode(&keys); err != nil {
		return "", fmt.Errorf("%s: %w", name, jsonError(data, 0, err))
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("ttfts") || has("itls"):
		return FormatVLLM, nil
	case has("benchmarks"):
		return FormatGuideLLM, nil
	case has("chunk_times_s"), has("rejected") && has("arrival_s"):
		return FormatStreams, nil
	case has("metrics") && (has("metadata") || has("error")):
		return FormatAIPerf, nil
	case has("runs") && has("scenario"):
		return "", fmt.Errorf("%s: %w", name, ErrDocument)
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	if len(ks) > 8 {
		ks = append(ks[:8], "…")
	}
	return "", fmt.Errorf("%s: unknown format (keys %s): expected a vLLM benchmark result (ttfts, itls), "+
		"AIPerf profile_export.jsonl (metadata, metrics), GuideLLM benchmarks (benchmarks) or itlsim streams (chunk_times_s); "+
		"force one with --format", name, strings.Join(ks, ", "))
}

// Parse reads data in format f (detected from the content when f is "").
// A file may hold several runs (a GuideLLM sweep, a stream file of a
// comparison): one Recording each.
func Parse(name string, data []byte, f Format) ([]Recording, error) {
	data = TrimBOM(data)
	if f == "" {
		var err error
		if f, err = Detect(name, data); err != nil {
			return nil, err
		}
	}
	p, ok := parsers[f]
	if !ok {
		return nil, fmt.Errorf("%s: unknown input format %q", name, f)
	}
	recs, err := p(name, data)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		recs[i].File, recs[i].Format = name, f
		// A run of no requests would show a table of zeros, as if
		// measured: say so instead.
		recs[i].noteTokenCounts()
		if len(recs[i].Streams) == 0 && len(recs[i].Failed) == 0 && recs[i].rejected() == 0 {
			if len(recs) > 1 {
				return nil, fmt.Errorf("%s: run %q: no requests: the file records none for it, so there is nothing to analyze", name, recs[i].Name)
			}
			return nil, fmt.Errorf("%s: no requests: the file records none, so there is nothing to analyze", name)
		}
	}
	return recs, nil
}

// TrimBOM drops a UTF-8 byte-order mark at the start of data, which
// editors on Windows write and the trace readers accept too.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\ufeff")) }

// JSONError rewrites an error of encoding/json decoding data (a whole
// file) in plain words, with the line and column it refers to and the JSON
// path of a mistyped field: "line 3, column 12: runs.streams: expected a
// list, got JSON object". Other errors are returned as they are.
func JSONError(data []byte, err error) error {
	return jsonError(data, 0, err)
}

// jsonError rewrites an encoding/json error with the line and column it
// refers to; base is the offset in data where the decoded value started.
func jsonError(data []byte, base int64, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%s: invalid JSON: %s", position(data, base+syn.Offset), syn.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("%s: %s: expected %s, got JSON %s", position(data, base+typ.Offset), field, goType(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: truncated JSON: the file ends inside a value", position(data, int64(len(data))))
	}
	return err
}

// position is "line L, column C" of a byte offset.
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// textLine is one line of a file, without its '\n'.
type textLine struct {
	text []byte
	num  int // its line number, from 1
	off  int // its byte offset in the file, for jsonError
}

// nonBlankLines yields the lines of data that hold more than white space,
// numbered as in the file (blank lines count). The last line needs no '\n'.
func nonBlankLines(data []byte) iter.Seq[textLine] {
	return func(yield func(textLine) bool) {
		num := 0
		for off := 0; off < len(data); {
			end := bytes.IndexByte(data[off:], '\n')
			if end < 0 {
				end = len(data) - off
			}
			l := textLine{text: data[off : off+end], off: off}
			off += end + 1
			num++
			l.num = num
			if len(bytes.TrimSpace(l.text)) > 0 && !yield(l) {
				return
			}
		}
	}
}

// goType names a Go type for a reader of JSON.
func goType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "a " + t.Kind().String()
}

func firstRunes(b []byte, n int) string {
	s := []rune(string(b))
	if len(s) > n {
		return string(s[:n]) + "…"
	}
	return string(s)
}

// duplicateKey finds a key that one object of the JSON value data gives
// twice, at any depth, comparing as encoding/json matches fields (case
// aside): encoding/json keeps the last value, other readers the first, so
// the file is ambiguous. It returns the key and its offset, or ok false.
// data must be valid JSON (decode it first).
func duplicateKey(data []byte) (key string, off int64, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	// One frame per open object or array; an object's frame holds its keys.
	type frame struct {
		object  bool
		keys    []string
		wantKey bool
	}
	var stack []frame
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return "", 0, false
		}
		top := len(stack) - 1
		if d, isDelim := tok.(json.Delim); isDelim {
			switch d {
			case '{', '[':
				if top >= 0 && stack[top].object {
					stack[top].wantKey = true // the value read: a key comes next
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:top]
				if len(stack) == 0 {
					return "", 0, false
				}
			}
			continue
		}
		if top < 0 || !stack[top].object {
			continue
		}
		f := &stack[top]
		if !f.wantKey {
			f.wantKey = true // a scalar value
			continue
		}
		k, _ := tok.(string)
		for _, prev := range f.keys {
			if strings.EqualFold(prev, k) {
				// before is where the previous token ended: the key's
				// quote is the first after it.
				return k, before + int64(max(0, bytes.IndexByte(data[before:], '"'))), true
			}
		}
		f.keys = append(f.keys, k)
		f.wantKey = false
	}
}

// checkDuplicateKeys is the error for a key given twice in data, which
// starts at base in the file whole (for the position), or nil.
func checkDuplicateKeys(name string, whole, data []byte, base int64) error {
	if k, off, dup := duplicateKey(data); dup {
		return fmt.Errorf("%s: %s: key %q is given twice in one object (which value counts is ambiguous)",
			name, position(whole, base+off), k)
	}
	return nil
}
