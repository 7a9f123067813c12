package record

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
)

// WriteStreams writes the streams in itlsim's stream format (what analyze,
// gate and replay read), run naming them, one JSON line each, every request
// with its "outcome": a completed stream with its chunk times and tokens; a
// failed one with its "error" and the chunks it showed before it failed; a
// refused one with its "rejected" reason. "http_status" is a status other
// than 200; "response_id" the server's id for the response.
func WriteStreams(w io.Writer, run string, ss []Stream) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for i := range ss {
		s := &ss[i]
		b = append(b[:0], `{"run":`...)
		b = appendString(b, run)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, int64(s.ID), 10)
		b = append(b, `,"arrival_s":`...)
		b = strconv.AppendFloat(b, float64(s.Arrival)/1e9, 'g', -1, 64)
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, int64(s.InputTokens), 10)
		b = append(b, `,"outcome":`...)
		b = appendString(b, s.Outcome)
		if s.HTTPStatus != 0 && s.HTTPStatus != 200 {
			b = append(b, `,"http_status":`...)
			b = strconv.AppendInt(b, int64(s.HTTPStatus), 10)
		}
		switch {
		case s.Outcome == OutcomeRejected:
			b = append(b, `,"rejected":`...)
			b = appendString(b, s.Rejected)
		case s.Outcome != OutcomeOK:
			b = append(b, `,"error":`...)
			b = appendString(b, s.Err)
		}
		if len(s.ChunkTimes) > 0 && s.Outcome != OutcomeRejected {
			b = append(b, `,"output_tokens":`...)
			b = strconv.AppendInt(b, int64(s.OutputTokens), 10)
			b = append(b, `,"chunk_times_s":[`...)
			for j, t := range s.ChunkTimes {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(t)/1e9, 'g', -1, 64)
			}
			b = append(b, ']')
			if s.ChunkTokens != nil {
				b = append(b, `,"chunk_tokens":[`...)
				for j, n := range s.ChunkTokens {
					if j > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, int64(n), 10)
				}
				b = append(b, ']')
			}
		}
		if s.ResponseID != "" {
			b = append(b, `,"response_id":`...)
			b = appendString(b, s.ResponseID)
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendString appends s as a JSON string: a server's bytes need not be
// UTF-8, and Go's quoting of them is not JSON.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // invalid UTF-8 becomes U+FFFD
	return append(b, q...)
}
