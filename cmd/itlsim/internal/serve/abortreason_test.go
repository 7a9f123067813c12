package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/itlsim/itlsim/sim"
)

// reasonSink keeps each timeline's status, abort reason and chunk count;
// a test reads it while the engine writes it.
type reasonSink struct {
	mu    sync.Mutex
	lines map[int]string
}

func (s *reasonSink) Stream(t *sim.Timeline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lines == nil {
		s.lines = map[int]string{}
	}
	s.lines[t.ID] = fmt.Sprintf("%v %s", t.Status, t.Abort)
}

func (s *reasonSink) get(id int) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lines[id]
	return l, ok
}

// Every stream that ends before its end reaches the timelines with why:
// a client that hangs up after three chunks is cancelled, one that stops
// reading is cut by the write timeout, one still reading when the server
// stops and the drain runs out is cut by the drain; a stream read to its
// end is finished. The result counts them by the same reasons.
func TestAbortReasonsReachTheTimelines(t *testing.T) {
	setup, err := sim.DefaultConfig().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	sink := &reasonSink{}
	srv, err := New(setup, Options{ModelName: "m", TimeScale: 20, Limits: Limits{WriteTimeout: 300 * time.Millisecond}}, sink)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, 100*time.Millisecond, smallSendBuffers{ln}) }()

	dial := func(maxTokens int, small bool) (net.Conn, *bufio.Reader) {
		t.Helper()
		var d net.Dialer
		if small { // the server's writes block after a few kB, as behind a client that stopped reading
			d.Control = func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
			}
		}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		body := fmt.Sprintf(`{"prompt":"a b c d","max_tokens":%d,"ignore_eos":true,"stream":true}`, maxTokens)
		fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return conn, bufio.NewReader(conn)
	}
	// events reads n data events (all when n < 0); done: [DONE] came.
	events := func(br *bufio.Reader, n int) (got int, done bool) {
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("stream: %v %v", resp, err)
			return 0, false
		}
		sc := bufio.NewScanner(resp.Body)
		for (n < 0 || got < n) && sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if d == "[DONE]" {
					return got, true
				}
				got++
			}
		}
		return got, false
	}
	waitFor := func(id int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, ok := sink.get(id); ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("stream %d never ended", id)
			}
		}
	}

	// 0: read to its end.
	c0, br := dial(10, false)
	if n, done := events(br, -1); !done || n != 10 {
		t.Fatalf("a read stream: %d events (done %v), want 10 and [DONE]", n, done)
	}
	c0.Close()
	waitFor(0)
	// 1: the client hangs up after three chunks.
	c1, br := dial(100000, false)
	events(br, 3)
	c1.Close()
	waitFor(1)
	// 2: the client stops reading; the write timeout cuts it.
	c2, _ := dial(100000, true)
	waitFor(2)
	c2.Close()
	// 3: still reading when the server stops; the drain (100 ms) runs out.
	c3, br := dial(100000, false)
	events(br, 3)
	read := make(chan struct{})
	go func() { defer close(read); _, _ = br.WriteTo(discard{}) }()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30 s of stopping")
	}
	c3.Close()
	<-read

	want := map[int]string{0: "finished ", 1: "failed cancelled", 2: "failed write-timeout", 3: "failed drain"}
	for id, w := range want {
		if got, _ := sink.get(id); got != w {
			t.Errorf("stream %d: timeline %q, want %q", id, got, w)
		}
	}
	res := srv.Result()
	if res.Finished != 1 || res.Cancelled != 0 || fmt.Sprint(res.Aborted) != "map[cancelled:1 drain:1 write-timeout:1]" {
		t.Errorf("result: %d finished, %d cancelled, aborted %v; want 1, 0 and one for each reason", res.Finished, res.Cancelled, res.Aborted)
	}
}

// discard is io.Discard as a plain writer (bufio's WriteTo wants one).
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
