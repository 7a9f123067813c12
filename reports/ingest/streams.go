package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/scheduler"
)

// itlsim's stream format: JSON lines, one stream each, as `itlsim run
// --timelines` writes them (reports.TimelineWriter) and as any tool can:
//
//	{"run":"chunked","id":7,"arrival_s":1.25,"input_tokens":512,"output_tokens":3,"chunk_times_s":[1.31,1.33,1.35],"chunk_tokens":[1,1,1]}
//
// Times are seconds from the start of the run; chunk_times_s must not
// decrease and starts at or after arrival_s. run (optional) groups lines
// into runs, in order of first appearance; id must not repeat within a run.
// chunk_tokens (optional) gives each chunk's tokens; output_tokens defaults
// to their sum, or to one per chunk. A line with "error" (a string) is a
// failed request and needs no chunks; a simulation writes the chunks its
// client saw before the connection failed, which count in the output tokens
// and stalls, as the run counted them, and in no per-stream figure. A
// line with "rejected" (a scheduler reason such as "queue-full") is a
// request the server refused and needs no chunks. "outcome" (optional, as
// itlsim record writes it) names how the request ended — ok, rejected,
// error, reset, timeout, malformed or cancelled — and must agree with the
// line: ok for a stream without "error" or "rejected", rejected with
// "rejected", any other with "error". "http_status" (optional) is the
// answer's HTTP status, 100 to 599. Readers that predate them ignore both,
// as they ignore any other key (record's "response_id"), so a file with
// them reads everywhere and a file without them reads as before. Times are rounded to the nanosecond,
// the simulator's clock unit, so that a simulation's own streams come back
// exactly. The run's duration ends at its last chunk.

type streamLine struct {
	Run          *string    `json:"run"`
	ID           *int       `json:"id"`
	ArrivalS     *float64   `json:"arrival_s"`
	InputTokens  *int       `json:"input_tokens"`
	OutputTokens *int       `json:"output_tokens"`
	ChunkTimesS  []*float64 `json:"chunk_times_s"`
	ChunkTokens  []int      `json:"chunk_tokens"`
	Error        *string    `json:"error"`
	Rejected     *string    `json:"rejected"`
	Outcome      *string    `json:"outcome"`
	HTTPStatus   *int       `json:"http_status"`
}

// Outcomes names the values of a stream line's "outcome".
var Outcomes = []string{"ok", "rejected", "error", "reset", "timeout", "malformed", "cancelled"}

// checkOutcome checks a line's outcome and HTTP status against the rest of it.
func checkOutcome(where string, l *streamLine) error {
	if l.HTTPStatus != nil && (*l.HTTPStatus < 100 || *l.HTTPStatus > 599) {
		return fmt.Errorf("%s: http_status: expected an HTTP status 100-599, got %d", where, *l.HTTPStatus)
	}
	if l.Outcome == nil {
		return nil
	}
	o := *l.Outcome
	if !slices.Contains(Outcomes, o) {
		return fmt.Errorf("%s: outcome: expected one of %s, got %q", where, strings.Join(Outcomes, ", "), o)
	}
	switch {
	case o == "ok" && (l.Error != nil || l.Rejected != nil):
		return fmt.Errorf("%s: outcome \"ok\" on a line with \"error\" or \"rejected\": the line contradicts itself", where)
	case o == "rejected" && l.Rejected == nil:
		return fmt.Errorf("%s: outcome \"rejected\" without \"rejected\", the reason", where)
	case o != "ok" && o != "rejected" && l.Error == nil:
		return fmt.Errorf("%s: outcome %q without \"error\", what went wrong", where, o)
	}
	return nil
}

// nsOf converts seconds to whole nanoseconds, as float64.
func nsOf(s float64) float64 { return math.Round(s * 1e9) }

func parseStreams(name string, data []byte) ([]Recording, error) {
	var recs []*Recording
	byRun := map[string]*Recording{}
	seen := map[string]map[int]int{} // run → id → line
	for ln := range nonBlankLines(data) {
		where := fmt.Sprintf("line %d", ln.num)
		var l streamLine
		dec := json.NewDecoder(bytes.NewReader(ln.text))
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s: %w", name, jsonError(data, int64(ln.off), err))
		}
		if rest := bytes.TrimSpace(ln.text[dec.InputOffset():]); len(rest) > 0 {
			return nil, fmt.Errorf("%s: %s: unexpected data after the stream: one JSON object per line expected", name, where)
		}
		if err := checkDuplicateKeys(name, data, ln.text, int64(ln.off)); err != nil {
			return nil, err
		}
		run := ""
		if l.Run != nil {
			run = *l.Run
		}
		rec := byRun[run]
		if rec == nil {
			rec = &Recording{Name: run}
			byRun[run] = rec
			recs = append(recs, rec)
			seen[run] = map[int]int{}
		}
		if l.ID == nil {
			return nil, fmt.Errorf("%s: %s: expected \"id\", the request's number", name, where)
		}
		if prev, dup := seen[run][*l.ID]; dup {
			return nil, fmt.Errorf("%s: %s: id %d repeats line %d of run %q", name, where, *l.ID, prev, run)
		}
		seen[run][*l.ID] = ln.num
		if err := checkOutcome(where, &l); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if l.Rejected != nil {
			why, ok := scheduler.ReasonNamed(*l.Rejected)
			if !ok {
				return nil, fmt.Errorf("%s: %s: rejected: expected a reason (%s), got %q", name, where, strings.Join(scheduler.ReasonNames(), ", "), *l.Rejected)
			}
			rec.Rejected[why]++
			q := Refusal{ID: *l.ID, Reason: why}
			if l.ArrivalS != nil {
				q.Arrival = nsOf(*l.ArrivalS)
				if err := checkTime(where+": arrival_s", q.Arrival); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
			if l.InputTokens != nil {
				if *l.InputTokens < 0 {
					return nil, fmt.Errorf("%s: %s: input_tokens: negative count %d", name, where, *l.InputTokens)
				}
				q.InputTokens = *l.InputTokens
			}
			rec.Refused = append(rec.Refused, q)
			continue
		}
		failed := l.Error != nil
		if failed {
			rec.fail(errorKind(*l.Error))
			if len(l.ChunkTimesS) == 0 {
				continue
			}
		}
		if l.ArrivalS == nil {
			return nil, fmt.Errorf("%s: %s: expected \"arrival_s\", seconds from the start of the run", name, where)
		}
		if len(l.ChunkTimesS) == 0 {
			return nil, fmt.Errorf("%s: %s: expected \"chunk_times_s\" with at least one time (or \"error\" for a failed request)", name, where)
		}
		if l.ChunkTokens != nil && len(l.ChunkTokens) != len(l.ChunkTimesS) {
			return nil, fmt.Errorf("%s: %s: %d chunk_tokens for %d chunk_times_s", name, where, len(l.ChunkTokens), len(l.ChunkTimesS))
		}
		arrival := nsOf(*l.ArrivalS)
		if err := checkTime(where+": arrival_s", arrival); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		times := make([]float64, len(l.ChunkTimesS))
		for j, t := range l.ChunkTimesS {
			if t == nil {
				return nil, fmt.Errorf("%s: %s: chunk_times_s[%d]: expected a time in seconds, got null", name, where, j)
			}
			times[j] = nsOf(*t)
			if err := checkTime(fmt.Sprintf("%s: chunk_times_s[%d]", where, j), times[j]); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if times[0] < arrival {
			return nil, fmt.Errorf("%s: %s: first chunk at %g s before arrival at %g s", name, where, *l.ChunkTimesS[0], *l.ArrivalS)
		}
		s := Stream{ID: *l.ID, Arrival: arrival, TTFT: times[0] - arrival, E2EL: times[len(times)-1] - arrival,
			Chunks: len(times), Gaps: make([]float64, len(times)-1), ChunkTokens: l.ChunkTokens}
		for j := 1; j < len(times); j++ {
			if times[j] < times[j-1] {
				return nil, fmt.Errorf("%s: %s: chunk_times_s[%d] = %g s is before chunk_times_s[%d] = %g s: negative gap",
					name, where, j, *l.ChunkTimesS[j], j-1, *l.ChunkTimesS[j-1])
			}
			s.Gaps[j-1] = times[j] - times[j-1]
		}
		sum := 0
		for j, n := range l.ChunkTokens {
			if n < 0 {
				return nil, fmt.Errorf("%s: %s: chunk_tokens[%d]: negative count %d", name, where, j, n)
			}
			sum += n
		}
		switch {
		case l.OutputTokens != nil && l.ChunkTokens != nil && *l.OutputTokens != sum && !failed:
			return nil, fmt.Errorf("%s: %s: output_tokens %d but chunk_tokens sum to %d: the counts contradict each other",
				name, where, *l.OutputTokens, sum)
		case l.OutputTokens != nil:
			s.OutputTokens = *l.OutputTokens
		case l.ChunkTokens != nil:
			s.OutputTokens = sum
		default:
			s.OutputTokens = len(times)
		}
		if l.InputTokens != nil {
			s.InputTokens = *l.InputTokens
		}
		if err := checkStream(where, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if failed {
			rec.FailedStreams = append(rec.FailedStreams, s)
		} else {
			rec.Streams = append(rec.Streams, s)
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty file: expected one JSON stream per line", name)
	}
	out := make([]Recording, len(recs))
	for i, r := range recs {
		r.Duration = span(r.Streams)
		switch {
		case len(recs) == 1:
			r.Name = baseName(name)
		case r.Name == "":
			r.Name = baseName(name) + ":(unnamed)"
		default:
			r.Name = baseName(name) + ":" + r.Name
		}
		out[i] = *r
	}
	return out, nil
}
