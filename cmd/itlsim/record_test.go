package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileServer answers its n-th request with faults[n] (past the end:
// a good stream), on 127.0.0.1. Every fault ends in bounded time.
func hostileServer(t *testing.T, faults ...string) string {
	t.Helper()
	var n atomic.Int32
	chunk := func(w http.ResponseWriter, data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	text := func(w http.ResponseWriter, n int) {
		chunk(w, fmt.Sprintf(`{"id":"c","choices":[{"text":" w"}],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`, n))
	}
	final := func(w http.ResponseWriter, n int) {
		chunk(w, fmt.Sprintf(`{"id":"c","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":%d}}`, n))
		chunk(w, "[DONE]")
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fault := "ok"
		if i := int(n.Add(1)) - 1; i < len(faults) {
			fault = faults[i]
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch fault {
		case "ok":
			text(w, 1)
			text(w, 2)
			final(w, 2)
		case "reset":
			text(w, 1)
			text(w, 2)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		case "500":
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
		case "429":
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
		case "malformed":
			text(w, 1)
			chunk(w, `{"choices":[{"text":`)
		case "endless":
			for k := 1; r.Context().Err() == nil && k < 1000; k++ {
				text(w, k)
				time.Sleep(10 * time.Millisecond)
			}
		case "slow-headers":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "usage":
			for k := 1; k <= 5; k++ {
				text(w, k)
			}
			final(w, 2)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// record against a hostile server keeps what it saw: every request is a
// line with its outcome and the chunks shown before the fault (a stream
// whose usage contradicts itself, a reset, a never-ending stream cut by
// --timeout); a 429 is rejected; analyze reads the file; the exit status is
// 0 unless --fail-on-error or nothing completed.
func TestRecordHostileServerCLI(t *testing.T) {
	faults := []string{"ok", "reset", "500", "429", "malformed", "endless", "slow-headers", "usage", "ok"}
	type want struct {
		outcome, err string
		status       int
		chunks       int // -1: at least one
	}
	wants := []want{
		{"ok", "", 0, 2}, {"reset", "", 0, 2}, {"error", "http 500", 500, 0}, {"rejected", "", 429, 0},
		{"malformed", "malformed: a chunk that is not JSON", 0, 1}, {"timeout", "timeout", 0, -1},
		{"timeout", "timeout", 0, 0}, {"malformed", "malformed: completion_tokens went down", 0, 5}, {"ok", "", 0, 2},
	}
	dir := t.TempDir()
	args := func(url, out string, extra ...string) []string {
		return append([]string{"record", url, "--served-model-name", "m", "--requests", "9", "--rate", "1000",
			"--concurrency", "1", "--timeout", "300ms", "--input-len", "fixed:4", "--output-len", "fixed:2", "-o", out}, extra...)
	}
	out := filepath.Join(dir, "rec.jsonl")
	// The never-ending stream and the headers that never come end as
	// "timeout" outcomes below: the 300 ms timeout cut them, which is what
	// the run's length would show, without a bound on wall-clock time that
	// a loaded machine could break.
	r := execCLI(t, args(hostileServer(t, faults...), out)...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (two completed)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "9 requests sent, 6 failed:") || !strings.Contains(r.stderr, "1 rejected: rate-limited ×1") {
		t.Fatalf("stderr %q", r.stderr)
	}
	lines := readLines(t, out)
	if len(lines) != len(wants) {
		t.Fatalf("%d lines written, want %d", len(lines), len(wants))
	}
	for i, w := range wants {
		l := lines[i]
		if l.ID != i || l.Outcome != w.outcome || (w.err != "" && l.Error != w.err) || l.HTTPStatus != w.status ||
			(w.chunks >= 0 && len(l.ChunkTimes) != w.chunks) || (w.chunks < 0 && len(l.ChunkTimes) == 0) {
			t.Errorf("line %d (%s): %+v; want %+v", i, faults[i], l, w)
		}
	}
	if lines[3].Rejected != "rate-limited" {
		t.Errorf("the 429: rejected %q, want rate-limited", lines[3].Rejected)
	}
	// analyze reads what record wrote and agrees with its summary.
	mustRunCLI(t, "analyze", out)
	rr := mustRunCLI(t, "analyze", out, "--format", "json")
	if !strings.Contains(rr.stdout, `"rejected": 1`) || !strings.Contains(rr.stdout, `"malformed: completion_tokens went down": 1`) {
		t.Fatalf("analyze --format json:\n%.2000s", rr.stdout)
	}

	// --fail-on-error: the same recording, written, and exit 1.
	out2 := filepath.Join(dir, "strict.jsonl")
	r = execCLI(t, args(hostileServer(t, faults...), out2, "--fail-on-error")...)
	if r.code != 1 || !strings.Contains(r.stderr, "--fail-on-error: 7 of 9 requests did not complete") {
		t.Fatalf("--fail-on-error: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := len(readLines(t, out2)); n != 9 {
		t.Fatalf("--fail-on-error wrote %d lines, want 9", n)
	}

	// Nothing completed: written, exit 1.
	out3 := filepath.Join(dir, "none.jsonl")
	r = execCLI(t, args(hostileServer(t, "500", "429", "reset", "usage", "500", "500", "500", "500", "500"), out3)...)
	if r.code != 1 || !strings.Contains(r.stderr, "no request of 9 completed (8 failed, 1 rejected)") {
		t.Fatalf("nothing completed: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(out3); err != nil {
		t.Fatalf("nothing completed: %v; the failed streams must be written", err)
	}
}
