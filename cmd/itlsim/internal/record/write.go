package record

import (
	"bufio"
	"io"
	"strconv"
)

// WriteStreams writes the streams in itlsim's stream format (what analyze,
// gate and replay read), run naming them, one JSON line each: a completed
// stream with its chunk times and tokens, a failed one with its error. The
// server's response id goes in response_id, which readers ignore.
func WriteStreams(w io.Writer, run string, ss []Stream) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for i := range ss {
		s := &ss[i]
		b = append(b[:0], `{"run":`...)
		b = strconv.AppendQuote(b, run)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, int64(s.ID), 10)
		b = append(b, `,"arrival_s":`...)
		b = strconv.AppendFloat(b, float64(s.Arrival)/1e9, 'g', -1, 64)
		b = append(b, `,"input_tokens":`...)
		b = strconv.AppendInt(b, int64(s.InputTokens), 10)
		if s.Err != "" {
			b = append(b, `,"error":`...)
			b = strconv.AppendQuote(b, s.Err)
		} else {
			b = append(b, `,"output_tokens":`...)
			b = strconv.AppendInt(b, int64(s.OutputTokens), 10)
			b = append(b, `,"chunk_times_s":[`...)
			for j, t := range s.ChunkTimes {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(t)/1e9, 'g', -1, 64)
			}
			b = append(b, `],"chunk_tokens":[`...)
			for j, n := range s.ChunkTokens {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
			b = append(b, ']')
		}
		if s.ResponseID != "" {
			b = append(b, `,"response_id":`...)
			b = strconv.AppendQuote(b, s.ResponseID)
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
