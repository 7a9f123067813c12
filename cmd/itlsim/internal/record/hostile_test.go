package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/itlsim/itlsim/reports/ingest"
)

// sse writes one event and flushes it.
func sse(w http.ResponseWriter, data string) {
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// textChunk is a completion chunk of one word, with usage when n ≥ 0.
func textChunk(n int) string {
	if n < 0 {
		return `{"id":"c","choices":[{"text":" w"}]}`
	}
	return fmt.Sprintf(`{"id":"c","choices":[{"text":" w"}],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`, n)
}

func usageChunk(n int) string {
	return fmt.Sprintf(`{"id":"c","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`, n)
}

// hangUp waits until the client gives up (bounded, so a broken client
// cannot hold the test).
func hangUp(r *http.Request) {
	io.Copy(io.Discard, r.Body) // the server notices a closed connection once the body is read
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// hostile are the faults a server can commit, each with what record must
// make of it: its outcome, error or rejection, HTTP status and the chunks
// kept (nil tokens: unknown per chunk).
var hostile = []struct {
	name     string
	handler  func(w http.ResponseWriter, r *http.Request)
	outcome  string
	err      string
	rejected string
	status   int
	tokens   []int
	output   int
}{
	{"ok", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
		sse(w, textChunk(3))
		sse(w, usageChunk(3))
		sse(w, "[DONE]")
	}, OutcomeOK, "", "", 0, []int{1, 2}, 3},
	{"reset mid-stream", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
		sse(w, textChunk(2))
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.(*net.TCPConn).SetLinger(0) // close with a RST
		conn.Close()
	}, OutcomeReset, "", "", 0, []int{1, 1}, 2},
	{"closed before [DONE]", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
	}, OutcomeReset, "stream ended before [DONE]", "", 0, []int{1}, 1},
	{"http 500", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
	}, OutcomeError, "http 500", "", 500, nil, 0},
	{"http 429", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
	}, OutcomeRejected, "", "rate-limited", 429, nil, 0},
	{"serve's 503 naming its reason", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"request rejected by the simulated server: kv-full"}}`, http.StatusServiceUnavailable)
	}, OutcomeRejected, "", "kv-full", 503, nil, 0},
	{"malformed SSE", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
		sse(w, `{"choices":[{"text":`)
		sse(w, "[DONE]")
	}, OutcomeMalformed, "malformed: a chunk that is not JSON", "", 0, []int{1}, 1},
	{"an error event", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
		sse(w, `{"error":{"message":"engine died"}}`)
	}, OutcomeError, "error in stream", "", 0, []int{1}, 1},
	{"a JSON answer", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"text":"all at once"}]}`))
	}, OutcomeMalformed, "malformed: a JSON answer, not an event stream", "", 0, nil, 0},
	{"never ending", func(w http.ResponseWriter, r *http.Request) {
		for n := 1; r.Context().Err() == nil && n < 1000; n++ {
			sse(w, textChunk(n))
			time.Sleep(10 * time.Millisecond)
		}
	}, OutcomeTimeout, "timeout", "", 0, nil, 0},
	{"slow headers", func(w http.ResponseWriter, r *http.Request) {
		hangUp(r)
	}, OutcomeTimeout, "timeout", "", 0, nil, 0},
	{"usage that goes down", func(w http.ResponseWriter, r *http.Request) {
		for n := 1; n <= 5; n++ {
			sse(w, textChunk(n))
		}
		sse(w, usageChunk(2))
		sse(w, "[DONE]")
	}, OutcomeMalformed, "malformed: completion_tokens went down", "", 0, []int{1, 1, 1, 1, 1}, 5},
	{"trailing tokens without text", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(1))
		sse(w, textChunk(2))
		sse(w, usageChunk(4))
		sse(w, "[DONE]")
	}, OutcomeOK, "", "", 0, []int{1, 3}, 4},
	{"usage only at the end", func(w http.ResponseWriter, r *http.Request) {
		sse(w, textChunk(-1))
		sse(w, textChunk(-1))
		sse(w, usageChunk(6))
		sse(w, "[DONE]")
	}, OutcomeOK, "", "", 0, nil, 6},
	{"no output", func(w http.ResponseWriter, r *http.Request) {
		sse(w, usageChunk(0))
		sse(w, "[DONE]")
	}, OutcomeMalformed, "no output", "", 0, nil, 0},
}

// A hostile server cannot make record lose a stream: each fault is
// recorded with its outcome and the chunks shown before it, the per-request
// timeout cuts a stream that never ends and headers that never come, and
// analyze's reader takes every line written.
func TestRecordHostileServer(t *testing.T) {
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				c.handler(w, r)
			}))
			defer ts.Close()
			// The per-request timeout is what ends a stream that never ends:
			// its outcome says "timeout". The minute is only a hang guard, 200
			// times the timeout, so a loaded machine never fails it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := Run(ctx, requests(1, 4, 8, 0), Options{URL: ts.URL, Endpoint: EndpointCompletions,
				Model: "m", TimeScale: 1, ContinuousUsage: true, Timeout: 300 * time.Millisecond})
			if ctx.Err() != nil {
				t.Fatalf("record ran for a minute: the 300 ms per-request timeout did not end the stream (err %v)", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Streams) != 1 {
				t.Fatalf("%d streams, want 1", len(res.Streams))
			}
			s := res.Streams[0]
			if s.Outcome != c.outcome || (c.err != "" && s.Err != c.err) || s.Rejected != c.rejected || s.HTTPStatus != c.status {
				t.Fatalf("outcome %q, error %q, rejected %q, status %d; want %q, %q, %q, %d", s.Outcome, s.Err, s.Rejected, s.HTTPStatus, c.outcome, c.err, c.rejected, c.status)
			}
			if c.outcome != OutcomeOK && c.outcome != OutcomeRejected && s.Err == "" {
				t.Fatalf("a %s stream without an error", s.Outcome)
			}
			if c.name == "never ending" {
				if len(s.ChunkTimes) == 0 || len(s.ChunkTimes) != len(s.ChunkTokens) {
					t.Fatalf("%d chunk times, %d token counts; want the chunks seen before the timeout", len(s.ChunkTimes), len(s.ChunkTokens))
				}
			} else {
				if !slices.Equal(s.ChunkTokens, c.tokens) || s.OutputTokens != c.output {
					t.Fatalf("chunk tokens %v, output %d; want %v, %d", s.ChunkTokens, s.OutputTokens, c.tokens, c.output)
				}
				want := len(c.tokens)
				if c.name == "usage only at the end" {
					want = 2
				}
				if len(s.ChunkTimes) != want {
					t.Fatalf("%d chunk times, want %d", len(s.ChunkTimes), want)
				}
			}
			wantFailed, wantRejected := 1, 0
			if c.outcome == OutcomeOK {
				wantFailed = 0
			}
			if c.outcome == OutcomeRejected {
				wantFailed, wantRejected = 0, 1
			}
			if len(res.Failed) != wantFailed || len(res.Rejected) != wantRejected || res.Completed() != 1-wantFailed-wantRejected {
				t.Fatalf("failed %v, rejected %v, %d completed", res.Failed, res.Rejected, res.Completed())
			}
			var buf bytes.Buffer
			if err := WriteStreams(&buf, "h", res.Streams); err != nil {
				t.Fatal(err)
			}
			recs, err := ingest.Parse("h.jsonl", buf.Bytes(), ingest.FormatStreams)
			if err != nil {
				t.Fatalf("analyze's reader refuses what record wrote: %v\n%s", err, buf.Bytes())
			}
			r := recs[0]
			if got := len(r.Streams) + len(r.FailedStreams); got != boolInt(len(s.ChunkTimes) > 0) {
				t.Fatalf("read back %d streams with chunks, want %d\n%s", got, boolInt(len(s.ChunkTimes) > 0), buf.Bytes())
			}
			nRej := 0
			for _, n := range r.Rejected {
				nRej += n
			}
			if nRej != wantRejected || len(r.Failed) != wantFailed {
				t.Fatalf("read back failed %v, %d rejected\n%s", r.Failed, nRej, buf.Bytes())
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
