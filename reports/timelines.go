package reports

import (
	"bufio"
	"io"
	"strconv"

	"github.com/itlsim/itlsim/sim"
)

// WorstStream is one of a run's streams with the largest gaps, whole: every
// chunk's time and each stall's split by cause. Times are seconds from the
// start of the run; gaps and parts are milliseconds.
type WorstStream struct {
	ID          int           `json:"id"`
	ArrivalS    float64       `json:"arrival_s"`
	MaxGapMS    float64       `json:"max_gap_ms"`
	ChunkTimesS []float64     `json:"chunk_times_s"`
	ChunkTokens []int         `json:"chunk_tokens"`
	Stalls      []StallRecord `json:"stalls"`
}

// StallRecord is one stall of a worst stream: the gap that ends at chunk
// Index (0-based), when it started, and its parts by cause.
type StallRecord struct {
	Index   int                `json:"index"`
	StartS  float64            `json:"start_s"`
	GapMS   float64            `json:"gap_ms"`
	CauseMS map[string]float64 `json:"cause_ms"`
}

// WorstStreams converts a result's worst streams.
func WorstStreams(r *sim.Result) []WorstStream {
	out := make([]WorstStream, 0, len(r.Worst))
	for _, w := range r.Worst {
		ws := WorstStream{ID: w.ID, ArrivalS: w.Arrival.Seconds(), MaxGapMS: w.MaxGap.MS(),
			ChunkTimesS: make([]float64, len(w.ChunkTimes)), ChunkTokens: w.ChunkTokens, Stalls: []StallRecord{}}
		for i, t := range w.ChunkTimes {
			ws.ChunkTimesS[i] = t.Seconds()
		}
		for _, s := range w.Stalls {
			rec := StallRecord{Index: s.Index, GapMS: s.Gap.MS(), CauseMS: map[string]float64{}}
			if s.Index >= 1 && s.Index < len(w.ChunkTimes) {
				rec.StartS = w.ChunkTimes[s.Index-1].Seconds()
			}
			for c, v := range s.Parts {
				if v > 0 {
					rec.CauseMS[sim.Cause(c).String()] = v.MS()
				}
			}
			ws.Stalls = append(ws.Stalls, rec)
		}
		out = append(out, ws)
	}
	return out
}

// TimelineWriter writes every request of a run in itlsim's stream format:
// JSON lines, one request each, a stream with its chunk times:
//
//	{"run":"chunked","id":7,"arrival_s":1.25,"input_tokens":512,"output_tokens":3,"chunk_times_s":[1.31,1.33,1.35],"chunk_tokens":[1,1,1]}
//
// Times are seconds from the start of the run; chunk_tokens gives the tokens
// each chunk made visible. A stream whose connection failed for good ends
// with "error":"connection" after the chunks it saw; one serve aborted with
// the reason after the chunks it had sent: "error":"cancelled" when its
// client went away, "write-timeout" when the client stopped reading and
// the server cut it, "drain" when the server stopped and --drain ran out;
// a rejected request has
// no chunks and says why, "rejected":"queue-full" (a scheduler reason).
// Analyzing the file counts them as the run did. It implements
// sim.TimelineSink and allocates nothing per stream once its buffer has
// grown.
type TimelineWriter struct {
	w   *bufio.Writer
	run string
	buf []byte
	err error
}

// NewTimelineWriter writes timelines of the named run to w. Call Flush at the end.
func NewTimelineWriter(w io.Writer, run string) *TimelineWriter {
	return &TimelineWriter{w: bufio.NewWriterSize(w, 1<<16), run: run}
}

// Stream writes one timeline as a JSON line.
func (t *TimelineWriter) Stream(s *sim.Timeline) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = append(b, `{"run":`...)
	b = strconv.AppendQuote(b, t.run)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, int64(s.ID), 10)
	b = append(b, `,"arrival_s":`...)
	b = strconv.AppendFloat(b, s.Arrival.Seconds(), 'g', -1, 64)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, int64(s.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(s.OutputTokens), 10)
	if s.Status == sim.StatusRejected {
		b = append(b, `,"rejected":`...)
		b = strconv.AppendQuote(b, s.Reject.String())
		b = append(b, "}\n"...)
		t.buf = b
		_, t.err = t.w.Write(b)
		return
	}
	b = append(b, `,"chunk_times_s":[`...)
	for i, c := range s.Chunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, c.At.Seconds(), 'g', -1, 64)
	}
	b = append(b, `],"chunk_tokens":[`...)
	for i, c := range s.Chunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c.Tokens), 10)
	}
	b = append(b, ']')
	switch s.Status {
	case sim.StatusFailed:
		if s.Abort != "" { // serve aborted it: cancelled (the client went away), write-timeout or drain
			b = append(b, `,"error":`...)
			b = strconv.AppendQuote(b, s.Abort)
		} else {
			b = append(b, `,"error":"connection"`...)
		}
	case sim.StatusCancelled:
		b = append(b, `,"error":"cancelled"`...)
	}
	b = append(b, "}\n"...)
	t.buf = b
	_, t.err = t.w.Write(b)
}

// Flush writes buffered lines and returns the first error met.
func (t *TimelineWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}

var _ sim.TimelineSink = (*TimelineWriter)(nil)
