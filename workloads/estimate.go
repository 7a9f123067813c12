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
//     send, not known before it runs: one per user is counted (users ×
//     duration / think time would be a bound only for a server that takes
//     no time, and refuses loops that fit: 1000 users thinking 1 s over
//     1000 s sent 23064 requests on the default scenario, not 10^6);
//   - a line-based trace (azure, mooncake, vidur, itlsim): its lines, less
//     a CSV header, times Sample (the window is not applied: an upper
//     bound); a lengths trace takes its arrivals from the arrival process,
//     as a generated workload does.
//
// It is 0 when the count is not known up front: a vLLM benchmark result
// (read whole, so bounded by its size), a ServeGen client (bounded by its
// own check) or a trace that cannot be read (the run then reports why).
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
	switch format {
	case FormatLengths:
		return generatedRequests(c)
	case FormatVLLMBench, FormatServeGen:
		return 0
	}
	n, csv, err := cachedLines(c.Trace)
	if err != nil {
		return 0
	}
	if csv && n > 0 {
		n-- // the header
	}
	rows := float64(n)
	if c.Sample > 0 && c.Sample < 1 {
		rows *= c.Sample
	}
	return rows
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

// lineCounts keeps countLines' answers by file (path, size and
// modification time), so that the variants of a sweep over one trace read
// it once.
var lineCounts sync.Map // lineKey → lineCount

type lineKey struct {
	path string
	size int64
	mod  int64
}

type lineCount struct {
	n   int
	csv bool
}

func cachedLines(path string) (int, bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false, err
	}
	if !fi.Mode().IsRegular() { // a FIFO or a device: not read twice, not estimated
		return 0, false, os.ErrInvalid
	}
	k := lineKey{path, fi.Size(), fi.ModTime().UnixNano()}
	if v, ok := lineCounts.Load(k); ok {
		c := v.(lineCount)
		return c.n, c.csv, nil
	}
	n, csv, err := countLines(path)
	if err == nil {
		lineCounts.Store(k, lineCount{n, csv})
	}
	return n, csv, err
}

// countLines counts the lines of path (a last line without a newline
// too), up to one more than the simulator's request limit, and reports
// whether the first one is not a JSON object (a CSV header).
func countLines(path string) (n int, csv bool, err error) {
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
