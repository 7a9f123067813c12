package workloads

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Names of the trace formats, the values of Config.Format.
const (
	FormatAzure    = "azure"
	FormatMooncake = "mooncake"
	FormatVidur    = "vidur"
	FormatLengths  = "lengths"
	FormatServeGen = "servegen"
	FormatItlsim   = "itlsim"
)

// formatSpec describes one trace format.
type formatSpec struct {
	describe string
	// parse starts reading a row-per-request format; nil for the formats
	// that are not replayed row by row (lengths, servegen).
	parse parseFunc
}

// parseFunc starts reading a trace from r; name labels errors.
// keepPrefix false lets a reader skip storing prefix block ids (they are
// still checked).
type parseFunc func(r io.Reader, name string, keepPrefix bool) (recordReader, error)

// opener returns a function opening files with a format's parser; the
// reader it returns closes the file.
func opener(parse parseFunc) func(path string, keepPrefix bool) (*fileRecords, error) {
	return func(path string, keepPrefix bool) (*fileRecords, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rr, err := parse(f, path, keepPrefix)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &fileRecords{recordReader: rr, f: f}, nil
	}
}

// fileRecords is a recordReader that owns its file.
type fileRecords struct {
	recordReader
	f *os.File
}

func (r *fileRecords) close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// ReadRequests reads a whole trace of a row-per-request format (azure,
// mooncake, vidur, itlsim; not lengths or servegen, which are not request
// logs) from r into memory, in file order, with arrivals on the file's own
// clock (not shifted). name labels errors and, for itlsim, picks JSON lines
// or CSV by its extension. It is meant for tools and tests; New streams.
func ReadRequests(r io.Reader, name, format string) ([]Request, error) {
	f, ok := formats()[format]
	if !ok || f.parse == nil {
		return nil, fmt.Errorf("%s: ReadRequests reads the formats azure, itlsim, mooncake and vidur, not %q", name, format)
	}
	rr, err := f.parse(r, name, true)
	if err != nil {
		return nil, err
	}
	var out []Request
	for {
		var q Request
		ok, err := rr.next(&q)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		q.ID = len(out)
		out = append(out, q)
	}
}

// formats is the registry of trace formats; Formats and the errors derive
// from it.
func formats() map[string]formatSpec {
	return map[string]formatSpec{
		FormatAzure: {"Azure LLM inference CSV: TIMESTAMP,ContextTokens,GeneratedTokens; arrival = time since the earliest row",
			newAzure},
		FormatMooncake: {"Mooncake JSONL: timestamp (ms), input_length, output_length, hash_ids (one per 512-token block)",
			newMooncake},
		FormatVidur: {"Vidur/Splitwise processed CSV: arrived_at (s), num_prefill_tokens, num_decode_tokens",
			newVidur},
		FormatLengths:   {"length-only CSV: num_prefill_tokens, num_decode_tokens; arrivals from the arrival process", nil},
		FormatVLLMBench: {"vLLM benchmark result JSON: input_lens, output_lens; start_times, else Poisson at request_rate (all at 0 for inf)", nil},
		FormatServeGen: {"ServeGen client: NAME-trace.csv (per-window rate, CV, Gamma/Weibull) + NAME-dataset.json (length PMFs)",
			nil},
		FormatItlsim: {"itlsim requests, JSONL or CSV: arrival_s, input_tokens, output_tokens[, class, priority, prefix_blocks, prefix_block_tokens]",
			newItlsim},
	}
}

// Formats returns the valid values of Config.Format, sorted.
func Formats() []string {
	names := make([]string, 0, 6)
	for name := range formats() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// DescribeFormat returns a one-line description of a trace format.
func DescribeFormat(name string) (string, bool) {
	f, ok := formats()[name]
	return f.describe, ok
}

// IsTimed reports whether a trace of this format brings its own arrival
// times (every format but lengths), in which case Config's requests,
// duration_s, arrival, rate and lengths settings do not apply.
func IsTimed(format string) bool { return format != FormatLengths }

// detectOrCheck returns c.Format, or the format detected from c.Trace.
func detectOrCheck(c Config) (string, error) {
	if c.Format != "" {
		return c.Format, nil
	}
	f, err := DetectFormat(c.Trace)
	if err != nil {
		return "", fmt.Errorf("workload.trace: %w", err)
	}
	return f, nil
}

// DetectFormat tells a trace's format from its name and first line:
//
//   - NAME-trace.csv or NAME-dataset.json: servegen;
//   - a JSON object whose first 64 KiB hold input_lens and output_lens:
//     vllm-bench (a vLLM benchmark result);
//   - a first line that is a JSON object: itlsim if it has arrival_s,
//     mooncake if it has timestamp or hash_ids;
//   - a CSV header: azure with TIMESTAMP and ContextTokens, vidur with
//     arrived_at, itlsim with arrival_s, lengths with num_prefill_tokens
//     and num_decode_tokens (header names compare case-insensitively).
func DetectFormat(path string) (string, error) {
	base := filepath.Base(path)
	if strings.HasSuffix(base, servegenTraceSuffix) || strings.HasSuffix(base, servegenDatasetSuffix) {
		return FormatServeGen, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 1<<16).ReadSlice('\n')
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\ufeff")))
	if len(line) == 0 {
		return "", fmt.Errorf("%s:1: empty first line; cannot tell the format (set workload.format: %s)", path, strings.Join(Formats(), ", "))
	}
	if line[0] == '{' {
		head := make([]byte, 1<<16)
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			if n, _ := io.ReadFull(f, head); isVLLMBench(head[:n]) {
				return FormatVLLMBench, nil
			}
		}
		var sc jsonScanner
		keys := map[string]bool{}
		if sc.reset(line); sc.open() == nil {
			for sc.more() {
				k, err := sc.key()
				if err != nil {
					break
				}
				keys[string(k)] = true
				if sc.skip() != nil {
					break
				}
			}
		}
		switch {
		case keys[colArrivalS]:
			return FormatItlsim, nil
		case keys["timestamp"] || keys["hash_ids"]:
			return FormatMooncake, nil
		}
		return "", fmt.Errorf("%s:1: a JSON line with neither arrival_s (itlsim) nor timestamp/hash_ids (mooncake); set workload.format", path)
	}
	cols := map[string]bool{}
	for c := range strings.SplitSeq(string(line), ",") {
		cols[strings.ToLower(strings.Trim(strings.TrimSpace(c), `"`))] = true
	}
	switch {
	case cols["timestamp"] && cols["contexttokens"]:
		return FormatAzure, nil
	case cols["arrived_at"]:
		return FormatVidur, nil
	case cols[colArrivalS]:
		return FormatItlsim, nil
	case cols[ColumnInput] && cols[ColumnOutput]:
		return FormatLengths, nil
	}
	show := string(line)
	if len(show) > 80 {
		show = show[:80] + "…"
	}
	return "", fmt.Errorf("%s:1: cannot tell the format from the first line %q; set workload.format (%s)",
		path, show, strings.Join(Formats(), ", "))
}

// recordReader reads a row-per-request trace. next fills r's Arrival (ns
// on the trace's own clock), InputTokens, OutputTokens and, where the
// format has them, Class, Priority, PrefixBlocks and PrefixBlockTokens; it
// returns false at the end of the file. Errors name the file and line.
type recordReader interface {
	next(r *Request) (bool, error)
}

// openReplay checks a trace from end to end and returns its replay. The
// check pass reads every row in constant memory and notes the earliest
// arrival (the replay's time zero) and whether rows are in time order. A
// trace in order is then streamed again; one out of order is read into
// memory and sorted (stably, so equal times keep their file order).
func openReplay(path string, parse parseFunc, win Window, seed uint64, skip bool) (Source, error) {
	open := opener(parse)
	rr, err := open(path, false)
	if err != nil {
		return nil, err
	}
	var r Request
	n, sorted, skipped := 0, true, 0
	var origin, prev, last int64
	var lastErr string
	for {
		ok, err := rr.next(&r)
		if err != nil {
			// With skip_bad_rows a malformed row is counted and passed
			// over; the same error twice in a row is not a row's, so it stops.
			if skip && err.Error() != lastErr {
				lastErr = err.Error()
				skipped++
				continue
			}
			rr.close()
			return nil, err
		}
		if !ok {
			break
		}
		if n == 0 {
			origin, prev, last = r.Arrival, r.Arrival, r.Arrival
		}
		sorted = sorted && r.Arrival >= prev
		origin, last, prev = min(origin, r.Arrival), max(last, r.Arrival), r.Arrival
		n++
	}
	rr.close()
	if n == 0 {
		return nil, fmt.Errorf("%s: no requests", path)
	}
	if !win.IsZero() && float64(last-origin)/1e9 < win.Start {
		return nil, fmt.Errorf("workload.window_s: %s spans %.3f s, so no request arrives in [%g, %g) s",
			path, float64(last-origin)/1e9, win.Start, win.End)
	}
	if rr, err = open(path, true); err != nil {
		return nil, err
	}
	if sorted {
		return &replay{rr: rr, origin: origin, seed: seed, skip: skip, skipped: skipped}, nil
	}
	reqs := make([]Request, 0, n)
	lastErr = ""
	for {
		ok, err := rr.next(&r)
		if err != nil {
			if skip && err.Error() != lastErr {
				lastErr = err.Error()
				continue
			}
			rr.close()
			return nil, err
		}
		if !ok {
			break
		}
		reqs = append(reqs, r)
	}
	rr.close()
	slices.SortStableFunc(reqs, func(a, b Request) int {
		switch {
		case a.Arrival < b.Arrival:
			return -1
		case a.Arrival > b.Arrival:
			return 1
		}
		return 0
	})
	for i := range reqs {
		reqs[i].Arrival -= origin
		reqs[i].ID = i
		reqs[i].Seed = RequestSeed(seed, i)
	}
	return &skippedSlice{Slice{Requests: reqs}, skipped}, nil
}

// skippedSlice is a sorted trace in memory that remembers the rows
// skip_bad_rows passed over.
type skippedSlice struct {
	Slice
	skipped int
}

// Skipped is how many malformed rows skip_bad_rows passed over.
func (s *skippedSlice) Skipped() int { return s.skipped }

// SkippedRows returns how many malformed rows the source's trace had that
// skip_bad_rows passed over (0 for a source that skips nothing).
func SkippedRows(src Source) int {
	for {
		switch s := src.(type) {
		case interface{ Skipped() int }:
			return s.Skipped()
		case *transform:
			src = s.src
		case *capped:
			src = s.src
		default:
			return 0
		}
	}
}

// replay streams a checked, time-ordered trace, shifting its clock so the
// earliest request arrives at 0.
type replay struct {
	rr      *fileRecords
	origin  int64
	seed    uint64
	next    int
	err     error
	done    bool
	skip    bool
	skipped int
}

// Skipped is how many malformed rows skip_bad_rows passed over.
func (s *replay) Skipped() int { return s.skipped }

func (s *replay) Next(r *Request) bool {
	if s.done {
		return false
	}
	ok, err := s.rr.next(r)
	for lastErr := ""; err != nil && s.skip && err.Error() != lastErr; {
		lastErr = err.Error()
		ok, err = s.rr.next(r)
	}
	if err != nil || !ok {
		s.err = err
		s.Close()
		return false
	}
	r.Arrival -= s.origin
	r.ID = s.next
	r.Seed = RequestSeed(s.seed, s.next)
	s.next++
	return true
}

// Err returns the error that ended the replay early, if any.
func (s *replay) Err() error { return s.err }

// Close closes the trace file; Next then returns false.
func (s *replay) Close() error {
	if s.done {
		return nil
	}
	s.done = true
	return s.rr.close()
}

var _ Source = (*replay)(nil)

// blockArena hands out prefix block id slices carved from large chunks, so
// reading a trace allocates once per chunk rather than once per request. A
// chunk is freed when no request refers to it any more.
type blockArena struct {
	chunk []uint64
}

const arenaChunk = 1 << 16

// copyOf returns a capacity-limited copy of ids in the arena.
func (a *blockArena) copyOf(ids []uint64) []uint64 {
	n := len(ids)
	if n == 0 {
		return nil
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]uint64, 0, max(n, arenaChunk))
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, ids...)
	return a.chunk[start : start+n : start+n]
}

// interner makes repeated class names share one string.
type interner map[string]string

func (in interner) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if len(in) < 1<<16 { // a trace with more classes than this keeps copies
		in[s] = s
	}
	return s
}
