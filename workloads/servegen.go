package workloads

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

// File name suffixes of a ServeGen client's two files.
const (
	servegenTraceSuffix   = "-trace.csv"
	servegenDatasetSuffix = "-dataset.json"
)

// ServeGen is one client of Alibaba's ServeGen workload characterization
// (alibaba/ServeGen, data/<category>/<model>/chunk-N-*), read by
// ReadServeGen. It is not a request log but per-window statistics, from
// which Source generates requests:
//
// NAME-trace.csv has no header; each row is one window
//
//	ts_s,rate_rps,cv,pattern,arg1,arg2
//	1800,0.15,4.068,Gamma,0.0604,103.65
//
// starting at ts_s (integer seconds, increasing) and lasting until the
// next row's ts_s (the last row as long as the one before it: 600 s in the
// published files). pattern is the fitted inter-arrival distribution:
// Gamma(shape=arg1, scale=arg2) or Weibull(c=arg1, scale=arg2), or empty
// for an idle window. Requests arrive in each active window as a renewal
// process whose gaps have the fitted shape and mean 1/rate_rps (the fitted
// scale is replaced so the window's rate is exactly its rate_rps; for Gamma
// the fitted mean is within a few percent of it anyway). The cv column is
// not used: for Gamma it equals 1/√shape, for Weibull it is the measured
// CV, which the fitted shape does not reproduce. Each window starts afresh
// at its start time.
//
// NAME-dataset.json maps a window start (seconds, a string key) to length
// distributions that apply from then until the next key:
//
//	{"0": {"input_tokens": "{224: 0.0003, 225: 0.0008, ...}", "output_tokens": "{...}"}, ...}
//
// Each distribution is a string holding a Python dict literal from token
// count to probability; they are normalized. Input and output lengths are
// drawn independently (the files give only their marginals). A key holding
// an empty dict ("{}") is skipped, so its windows use the previous key's
// distributions, as ServeGen's own loader does; other keys (reason_ratio)
// are ignored. Requests of an active window before the first dataset key
// cannot be given lengths: such windows generate no requests.
//
// Both files are read into memory (they hold statistics, not requests).
type ServeGen struct {
	windows []servegenWindow
	lengths []servegenLengths
	origin  int64 // the first window's start, ns
}

type servegenWindow struct {
	start, end int64 // ns
	rate       float64
	gaps       gapSampler // nil: idle
	lengths    int        // index into ServeGen.lengths, -1: none
}

type servegenLengths struct {
	start         int64 // ns
	input, output *pmf
}

// pmf is a discrete distribution of token counts.
type pmf struct {
	values []int32   // ascending
	cum    []float64 // cumulative probabilities; the last is 1
}

func (p *pmf) sample(r *seed.Rand) int {
	u := r.Float64()
	i, _ := slices.BinarySearch(p.cum, u)
	for i < len(p.cum)-1 && p.cum[i] <= u {
		i++
	}
	return int(p.values[min(i, len(p.values)-1)])
}

// servegenPair returns the trace and dataset paths of the client path names.
func servegenPair(path string) (trace, dataset string, err error) {
	switch {
	case strings.HasSuffix(path, servegenTraceSuffix):
		return path, strings.TrimSuffix(path, servegenTraceSuffix) + servegenDatasetSuffix, nil
	case strings.HasSuffix(path, servegenDatasetSuffix):
		return strings.TrimSuffix(path, servegenDatasetSuffix) + servegenTraceSuffix, path, nil
	}
	return "", "", fmt.Errorf("%s: a ServeGen client is a pair of files NAME%s and NAME%s; name either", path,
		servegenTraceSuffix, servegenDatasetSuffix)
}

// ReadServeGen reads a ServeGen client from either of its two files (the
// other is found by name).
func ReadServeGen(path string) (*ServeGen, error) {
	tracePath, datasetPath, err := servegenPair(path)
	if err != nil {
		return nil, err
	}
	tf, err := os.Open(tracePath)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	df, err := os.Open(datasetPath)
	if err != nil {
		return nil, err
	}
	defer df.Close()
	return ParseServeGen(tf, tracePath, df, datasetPath)
}

// ParseServeGen reads a ServeGen client from its two files' contents; the
// names label errors.
func ParseServeGen(trace io.Reader, traceName string, dataset io.Reader, datasetName string) (*ServeGen, error) {
	m := &ServeGen{}
	if err := m.parseTrace(trace, traceName); err != nil {
		return nil, err
	}
	if err := m.parseDataset(dataset, datasetName); err != nil {
		return nil, err
	}
	active, usable := 0, 0
	for i := range m.windows {
		w := &m.windows[i]
		w.lengths = -1
		for j, l := range m.lengths {
			if l.start <= w.start {
				w.lengths = j
			}
		}
		if w.gaps != nil {
			active++
			if w.lengths >= 0 {
				usable++
			}
		}
	}
	if active == 0 {
		return nil, fmt.Errorf("%s: every window is idle: no request would arrive", traceName)
	}
	if usable == 0 {
		return nil, fmt.Errorf("%s: no active window has length distributions in %s (its first key is after every active window)",
			traceName, datasetName)
	}
	return m, nil
}

func (m *ServeGen) parseTrace(r io.Reader, name string) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s: %s", name, line, field, fmt.Sprintf(format, args...))
		}
		if len(rec) != 6 {
			return fmt.Errorf("%s:%d: expected 6 fields ts_s,rate_rps,cv,pattern,arg1,arg2, got %d", name, line, len(rec))
		}
		var num [6]float64
		for i, field := range [6]string{"ts_s", "rate_rps", "cv", "", "arg1", "arg2"} {
			if i == 3 {
				continue
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
			if err != nil || !(x >= 0) || math.IsInf(x, 1) {
				return bad(field, "expected a finite number ≥ 0, got %s", quoted(rec[i]))
			}
			num[i] = x
		}
		ts := num[0]
		if ts != math.Trunc(ts) || ts > maxHorizonS {
			return bad("ts_s", "expected whole seconds in [0, %g], got %s", float64(maxHorizonS), quoted(rec[0]))
		}
		start := int64(ts) * 1e9
		if n := len(m.windows); n > 0 {
			prev := &m.windows[n-1]
			if start <= prev.start {
				return bad("ts_s", "windows must start in increasing order, got %s after %d", quoted(rec[0]), prev.start/1e9)
			}
			prev.end = start
		}
		w := servegenWindow{start: start, rate: num[1]}
		pattern := strings.TrimSpace(rec[3])
		shape := num[4]
		switch {
		case pattern == "" || w.rate == 0:
			// idle
		case strings.EqualFold(pattern, "Gamma"):
			if !(shape >= 1e-3 && shape <= 1e4) {
				return bad("arg1", "Gamma shape must be in [0.001, 10000], got %s", quoted(rec[4]))
			}
			w.gaps = gammaGaps{k: shape}
		case strings.EqualFold(pattern, "Weibull"):
			if !(shape >= 0.05 && shape <= 100) {
				return bad("arg1", "Weibull shape must be in [0.05, 100], got %s", quoted(rec[4]))
			}
			lg, _ := math.Lgamma(1 + 1/shape)
			w.gaps = weibullGaps{c: shape, scale: math.Exp(-lg)}
		default:
			return bad("pattern", "expected Gamma, Weibull or empty, got %s", quoted(rec[3]))
		}
		if w.gaps != nil && w.rate < 1e-9 {
			return bad("rate_rps", "an active window needs a rate ≥ 1e-9 requests/s, got %s", quoted(rec[1]))
		}
		m.windows = append(m.windows, w)
	}
	n := len(m.windows)
	if n == 0 {
		return fmt.Errorf("%s:1: no windows", name)
	}
	last := &m.windows[n-1]
	size := int64(600e9)
	if n > 1 {
		size = m.windows[n-2].end - m.windows[n-2].start
	}
	last.end = last.start + size
	m.origin = m.windows[0].start
	return nil
}

func (m *ServeGen) parseDataset(r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(off, int64(len(data)))], []byte("\n")) }
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, lineAt(dec.InputOffset()), fmt.Sprintf(format, args...))
	}
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s:%d: malformed JSON: %v", name, lineAt(se.Offset), err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s:%d: unexpected end of file", name, lineAt(int64(len(data))))
		}
		return fail("malformed JSON: %v", err)
	}
	delim := func(want json.Delim, what string) error {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return fail("expected %s", what)
		}
		return nil
	}
	if err := delim('{', "an object of windows"); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		key, _ := tok.(string)
		ts, err := strconv.ParseInt(key, 10, 64)
		if err != nil || ts < 0 || ts > maxHorizonS {
			return fail("window key: expected whole seconds in [0, %g], got %q", float64(maxHorizonS), key)
		}
		if err := delim('{', fmt.Sprintf("window %q: an object of length distributions", key)); err != nil {
			return err
		}
		l := servegenLengths{start: ts * 1e9}
		empty := false
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return syntax(err)
			}
			field, _ := tok.(string)
			if field != "input_tokens" && field != "output_tokens" {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return syntax(err)
				}
				continue
			}
			tok, err = dec.Token()
			if err != nil {
				return syntax(err)
			}
			s, ok := tok.(string)
			if !ok {
				return fail("window %q: %s: expected a string holding a dict literal", key, field)
			}
			p, err := parsePMF(s)
			if err != nil {
				return fail("window %q: %s: %v", key, field, err)
			}
			if p == nil {
				empty = true
			} else if field == "input_tokens" {
				l.input = p
			} else {
				l.output = p
			}
		}
		if err := delim('}', "'}'"); err != nil {
			return err
		}
		switch {
		case empty:
			continue // ServeGen skips a window with an empty distribution
		case l.input == nil || l.output == nil:
			return fail("window %q: needs both input_tokens and output_tokens", key)
		}
		if n := len(m.lengths); n > 0 && l.start <= m.lengths[n-1].start {
			return fail("window %q: keys must increase", key)
		}
		m.lengths = append(m.lengths, l)
	}
	if err := delim('}', "'}'"); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("unexpected data after the object")
	}
	return nil
}

// parsePMF reads a Python dict literal {LEN: PROB, ...} with integer
// lengths ≥ 1 and probabilities ≥ 0 (normalized here); an empty dict gives
// nil.
func parsePMF(s string) (*pmf, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("expected a dict literal {LEN: PROB, ...}")
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	if body == "" {
		return nil, nil
	}
	body = strings.TrimSuffix(body, ",") // Python allows one trailing comma
	type entry struct {
		v int32
		p float64
	}
	var entries []entry
	var total float64
	for i, item := range strings.Split(body, ",") {
		item = strings.TrimSpace(item)
		k, v, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("entry %d: expected LEN: PROB, got %q", i+1, item)
		}
		n, err := parseCount(k)
		if err != nil || strings.ContainsAny(k, ".eE") {
			return nil, fmt.Errorf("entry %d: expected a token count ≥ 1, got %q", i+1, strings.TrimSpace(k))
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(p >= 0) || math.IsInf(p, 1) {
			return nil, fmt.Errorf("entry %d: expected a probability ≥ 0, got %q", i+1, strings.TrimSpace(v))
		}
		entries = append(entries, entry{n, p})
		total += p
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return nil, fmt.Errorf("probabilities must have a positive, finite sum, got %g", total)
	}
	slices.SortFunc(entries, func(a, b entry) int { return int(a.v) - int(b.v) })
	p := &pmf{}
	var acc float64
	for i, e := range entries {
		if i > 0 && e.v == entries[i-1].v {
			return nil, fmt.Errorf("length %d appears twice", e.v)
		}
		if e.p == 0 {
			continue
		}
		acc += e.p
		p.values = append(p.values, e.v)
		p.cum = append(p.cum, acc/total)
	}
	p.cum[len(p.cum)-1] = 1
	return p, nil
}

// Span returns the time the client's windows cover, in seconds.
func (m *ServeGen) Span() float64 {
	return float64(m.windows[len(m.windows)-1].end-m.origin) / 1e9
}

// ExpectedRequests returns the expected number of requests Source
// generates: Σ rate × window length over the active windows with lengths.
func (m *ServeGen) ExpectedRequests() float64 {
	var n float64
	for _, w := range m.windows {
		if w.gaps != nil && w.lengths >= 0 {
			n += w.rate * float64(w.end-w.start) / 1e9
		}
	}
	return n
}

// Source returns the requests of the client, generated from seed: gaps
// from the stream "arrivals", lengths from "lengths", and request i seeded
// with RequestSeed(seed, i). Times start at the first window.
func (m *ServeGen) Source(seed uint64) Source {
	return &servegenSource{m: m, seed: seed, arrivals: stream(seed, "arrivals"), lengths: stream(seed, "lengths")}
}

type servegenSource struct {
	m                 *ServeGen
	seed              uint64
	arrivals, lengths *seed.Rand
	wi                int     // current window
	t                 float64 // ns; < 0: the window has not started
	started           bool
	next              int
}

func (s *servegenSource) Next(r *Request) bool {
	for s.wi < len(s.m.windows) {
		w := &s.m.windows[s.wi]
		if w.gaps == nil || w.lengths < 0 {
			s.wi++
			continue
		}
		if !s.started {
			s.t, s.started = float64(w.start), true
		}
		s.t += w.gaps.gap(s.arrivals) * 1e9 / w.rate
		if s.t >= float64(w.end) {
			s.wi++
			s.started = false
			continue
		}
		l := &s.m.lengths[w.lengths]
		*r = Request{
			ID:           s.next,
			Arrival:      int64(math.Round(s.t)) - s.m.origin,
			InputTokens:  l.input.sample(s.lengths),
			OutputTokens: l.output.sample(s.lengths),
			Seed:         RequestSeed(s.seed, s.next),
		}
		s.next++
		return true
	}
	return false
}

var _ Source = (*servegenSource)(nil)
