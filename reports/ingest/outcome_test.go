package ingest

import (
	"strings"
	"testing"
)

// "outcome" and "http_status" are optional: lines with them read as record
// writes them, lines without them as before, and a line whose outcome
// contradicts it is refused with its line number.
func TestStreamOutcomes(t *testing.T) {
	good := `{"id":0,"arrival_s":0,"outcome":"ok","chunk_times_s":[0.1,0.2],"chunk_tokens":[1,1]}
{"id":1,"arrival_s":0,"outcome":"reset","error":"connection reset","output_tokens":1,"chunk_times_s":[0.1]}
{"id":2,"arrival_s":0,"outcome":"rejected","http_status":429,"rejected":"rate-limited"}
{"id":3,"arrival_s":0,"outcome":"error","http_status":500,"error":"http 500"}
{"id":4,"arrival_s":0,"chunk_times_s":[0.3]}
`
	recs, err := Parse("o.jsonl", []byte(good), FormatStreams)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if len(r.Streams) != 2 || len(r.FailedStreams) != 1 || r.Failed["http 500"] != 1 || len(r.Refused) != 1 {
		t.Fatalf("%d streams, %d failed with chunks, failed %v, %d refused", len(r.Streams), len(r.FailedStreams), r.Failed, len(r.Refused))
	}
	for _, c := range []struct{ line, want string }{
		{`{"id":0,"arrival_s":0,"outcome":"fine","chunk_times_s":[0.1]}`, `line 1: outcome: expected one of ok, rejected`},
		{`{"id":0,"arrival_s":0,"outcome":"ok","error":"x"}`, `line 1: outcome "ok" on a line with "error"`},
		{`{"id":0,"arrival_s":0,"outcome":"timeout","chunk_times_s":[0.1]}`, `line 1: outcome "timeout" without "error"`},
		{`{"id":0,"arrival_s":0,"outcome":"rejected","error":"x"}`, `line 1: outcome "rejected" without "rejected"`},
		{`{"id":0,"arrival_s":0,"http_status":1000,"error":"x"}`, `line 1: http_status: expected an HTTP status 100-599, got 1000`},
	} {
		if _, err := Parse("o.jsonl", []byte(c.line), FormatStreams); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.line, err, c.want)
		}
	}
}
