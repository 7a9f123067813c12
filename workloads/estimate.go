package workloads

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// RequestEstimate is about how many requests the workload c makes, for
// sizing a run before it starts (the simulator's memory estimate), without
// reading more than a trace's bytes once:
//
//   - a generated workload: Requests, or its rate over DurationS (times
//     the rate curve's mean multiplier);
//   - a closed loop: Requests when it bounds the loop; one bounded by
//     DurationS alone makes as many as the server's speed lets its users
//     send, which only the simulator can estimate (sim.MemoryEstimate
//     prices the users' requests with the replicas' step times): here one
//     per user is counted, the loop's floor;
//   - a line-based trace (azure, mooncake, vidur, itlsim): its lines, less
//     a CSV header, times Sample (the window is not applied: an upper
//     bound); a lengths trace takes its arrivals from the arrival process,
//     as a generated workload does;
//   - a vLLM benchmark result: the entries of its input_lens, times Sample;
//   - a ServeGen client: its expected requests (rate × window length).
//
// It is 0 when the count is not known up front: a trace that cannot be
// read (the run then reports why).
func RequestEstimate(c Config) float64 {
	if c.arrivalName() == ArrivalClosed {
		if c.Requests > 0 {
			return float64(c.Requests)
		}
		return float64(max(c.Users, 0))
	}
	if c.Trace == "" {
		return generatedRequests(c)
	}
	format, err := detectOrCheck(c)
	if err != nil {
		return 0
	}
	var rows float64
	switch format {
	case FormatLengths:
		return generatedRequests(c)
	case FormatServeGen:
		m, err := ReadServeGen(c.Trace)
		if err != nil {
			return 0
		}
		return m.ExpectedRequests()
	case FormatVLLMBench:
		n, err := cachedCount(c.Trace, "input_lens", countInputLens)
		if err != nil {
			return 0
		}
		rows = float64(n)
	default:
		n, err := cachedCount(c.Trace, "lines", countLines)
		if err != nil {
			return 0
		}
		rows = float64(n)
	}
	if c.Sample > 0 && c.Sample < 1 {
		rows *= c.Sample
	}
	return rows
}

// ClosedLoopByDuration reports whether c is a closed loop that only its
// DurationS bounds, whose request count depends on the server's speed.
func ClosedLoopByDuration(c Config) bool {
	return c.arrivalName() == ArrivalClosed && c.Requests <= 0 && c.DurationS > 0
}

// generatedRequests is a generator's count: Requests, or its expected
// count over DurationS.
func generatedRequests(c Config) float64 {
	if c.Requests > 0 {
		return float64(c.Requests)
	}
	if !(c.Rate > 0) || !(c.DurationS > 0) {
		return 0
	}
	return c.expectedRequests()
}

// counts keeps countLines' and countInputLens' answers by file (path,
// size and modification time), so that the variants of a sweep over one
// trace read it once.
var counts sync.Map // countKey → int

type countKey struct {
	path string
	size int64
	mod  int64
	kind string // what is counted: "lines" or "input_lens"
}

// cachedCount is count(path), the requests of the trace at path, read
// once per unchanged file.
func cachedCount(path, kind string, count func(string) (int, error)) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() { // a FIFO or a device: not read twice, not estimated
		return 0, os.ErrInvalid
	}
	k := countKey{path, fi.Size(), fi.ModTime().UnixNano(), kind}
	if v, ok := counts.Load(k); ok {
		return v.(int), nil
	}
	n, err := count(path)
	if err == nil {
		counts.Store(k, n)
	}
	return n, err
}

// countInputLens counts the entries of a vLLM benchmark result's
// input_lens array (the requests it read) without decoding the file: the
// commas between the key's "[" and its "]", plus one when it is not empty.
// A file without the key counts 0.
func countInputLens(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	key := []byte(`"input_lens"`)
	buf := make([]byte, 1<<16)
	var tail []byte // the end of the previous read, for a key cut in two
	state := 0      // 0: looking for the key; 1: for its "["; 2: in the array
	n, any := 0, false
	for {
		k, rerr := f.Read(buf)
		b := buf[:k]
		for len(b) > 0 {
			switch state {
			case 0:
				j := bytes.Index(append(tail, b...), key)
				if j < 0 {
					tail = append(tail[:0], b[max(0, len(b)-len(key)):]...)
					b = nil
					continue
				}
				b = b[max(0, j+len(key)-len(tail)):]
				tail = tail[:0]
				state = 1
			case 1:
				j := bytes.IndexByte(b, '[')
				if j < 0 {
					b = nil
					continue
				}
				b, state = b[j+1:], 2
			case 2:
				j := bytes.IndexByte(b, ']')
				part := b
				if j >= 0 {
					part = b[:j]
				}
				n += bytes.Count(part, []byte{','})
				any = any || len(bytes.Trim(part, " \t\r\n")) > 0
				if j >= 0 {
					if any {
						n++
					}
					return n, nil
				}
				b = nil
			}
		}
		if rerr == io.EOF {
			return 0, nil // no complete array: the reader will say why
		}
		if rerr != nil {
			return 0, rerr
		}
		if n > maxRequests {
			return n, nil
		}
	}
}

// countLines counts the lines of path (a last line without a newline
// too), up to one more than the simulator's request limit, and reports
// whether the first one is not a JSON object (a CSV header).
func countLines(path string) (int, error) {
	n, csv, err := countFileLines(path)
	if csv && n > 0 {
		n-- // the header
	}
	return n, err
}

func countFileLines(path string) (n int, csv bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	first, last := true, byte('\n')
	for n <= maxRequests {
		k, err := f.Read(buf)
		if k > 0 {
			if first {
				t := bytes.TrimLeft(buf[:k], " \t\r\n\ufeff")
				csv, first = len(t) == 0 || t[0] != '{', false
			}
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, csv, nil
}
