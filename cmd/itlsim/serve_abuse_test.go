package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// itlsim serve, as a user runs it, answers hostile requests with their
// status and an OpenAI error object, and serves a good request after
// them (the package's TestHTTPAbuse holds the full table).
func TestServeAbuseCLI(t *testing.T) {
	s := startServe(t, "--time-scale", "50", "--exit-after", "6")
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct {
		method, ctype, body string
		code                int
		want                string
	}{
		{"POST", "application/json", `{"prompt":"a","max_tokens":1000000000000}`, 400, "maximum context length"},
		{"POST", "application/json", `{"prompt":"a","max_completion_tokens":9223372036854775807}`, 400, "maximum context length"},
		{"POST", "text/plain", `{"prompt":"a"}`, 400, "Content-Type"},
		{"POST", "application/json", `{"prompt":"a","max_tokens":1,"max_tokens":2}`, 400, "duplicate key"},
		{"GET", "", ``, 405, "Method Not Allowed"},
	} {
		req, _ := http.NewRequest(c.method, s.url+"/v1/completions", strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		checkServeError(t, c.body, resp, c.code, c.want)
	}
	// A gigabyte announced is refused from the headers.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 1<<30)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("an announced 1 GiB body: %v", err)
	}
	checkServeError(t, "1 GiB", resp, 413, "more than")
	conn.Close()
	resp, err = client.Post(s.url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a b","max_tokens":3,"ignore_eos":true}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("good request after the abuse: %v %v", resp, err)
	}
	resp.Body.Close()
	if code := s.wait(t); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
}

func checkServeError(t *testing.T, name string, resp *http.Response, code int, want string) {
	t.Helper()
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != code || body.Error.Code != code || !strings.Contains(body.Error.Message, want) {
		t.Errorf("%s: %d %s (%v); want %d naming %q", name, resp.StatusCode, raw, err, code, want)
	}
}
