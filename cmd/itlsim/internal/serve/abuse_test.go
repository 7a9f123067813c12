package serve

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

// abuseMaxBody is the body limit the abuse tests serve with: small, so
// that an oversized body costs the test little.
const abuseMaxBody = 64 << 10

// apiErrorBody is OpenAI's error object, as serve writes it.
type apiErrorBody struct {
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// checkAPIError reads resp's body as OpenAI's error object for status
// code, its message naming want.
func checkAPIError(t *testing.T, name string, resp *http.Response, code int, want string) {
	t.Helper()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		t.Errorf("%s: reading the body: %v", name, err)
		return
	}
	var body apiErrorBody
	if err := json.Unmarshal(raw, &body); err != nil || body.Error == nil {
		t.Errorf("%s: %d %q: not an OpenAI error object (%v)", name, resp.StatusCode, raw, err)
		return
	}
	if resp.StatusCode != code || body.Error.Code != code || body.Error.Type == "" ||
		!strings.Contains(body.Error.Message, want) {
		t.Errorf("%s: %d %s; want %d naming %q", name, resp.StatusCode, raw, code, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", name, ct)
	}
}

// goodRequest asks for a short completion and checks it is served.
func goodRequest(t *testing.T, client *http.Client, base string) {
	t.Helper()
	resp, err := client.Post(base+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"a b c","max_tokens":4,"ignore_eos":true}`))
	if err != nil {
		t.Fatalf("good request: %v", err)
	}
	defer resp.Body.Close()
	var c struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 ||
		len(c.Choices) != 1 || len(strings.Fields(c.Choices[0].Text)) != 4 {
		t.Fatalf("good request: %d %+v (%v); want 200 with 4 words", resp.StatusCode, c, err)
	}
}

// Hostile requests, one table: each gets its status and an OpenAI error
// object naming what was wrong, and the server serves a good request
// after all of them.
func TestHTTPAbuse(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 50, Limits: Limits{MaxBody: abuseMaxBody}})
	client := &http.Client{Timeout: 10 * time.Second}
	const (
		cmpl = "/v1/completions"
		chat = "/v1/chat/completions"
		js   = "application/json"
	)
	type abuse struct {
		name, method, path, ctype, body string
		code                            int
		want                            string
	}
	cases := []abuse{
		// Counts beyond any context, of every size JSON can write.
		{"max_tokens 1e12", "", cmpl, js, `{"prompt":"a","max_tokens":1000000000000}`, 400, "maximum context length"},
		{"max_tokens int64 max", "", cmpl, js, `{"prompt":"a","max_tokens":9223372036854775807}`, 400, "maximum context length"},
		{"max_tokens beyond int64", "", cmpl, js, `{"prompt":"a","max_tokens":92233720368547758070}`, 400, "maximum context length"},
		{"max_tokens 1e400", "", cmpl, js, `{"prompt":"a","max_tokens":1e400}`, 400, "max_tokens"},
		{"max_tokens 1e12 float", "", cmpl, js, `{"prompt":"a","max_tokens":1e12}`, 400, "maximum context length"},
		{"max_tokens 1e999999999", "", cmpl, js, `{"prompt":"a","max_tokens":1e999999999}`, 400, "max_tokens"},
		{"max_tokens negative", "", cmpl, js, `{"prompt":"a","max_tokens":-1}`, 400, "max_tokens must be at least 1"},
		{"max_tokens int64 min", "", cmpl, js, `{"prompt":"a","max_tokens":-9223372036854775808}`, 400, "max_tokens must be at least 1"},
		{"max_tokens zero", "", cmpl, js, `{"prompt":"a","max_tokens":0}`, 400, "max_tokens must be at least 1"},
		{"max_tokens fraction", "", cmpl, js, `{"prompt":"a","max_tokens":1.5}`, 400, "valid integer"},
		{"max_tokens string", "", cmpl, js, `{"prompt":"a","max_tokens":"many"}`, 400, "valid integer"},
		{"max_tokens huge string", "", cmpl, js, `{"prompt":"a","max_tokens":"9223372036854775807"}`, 400, "maximum context length"},
		{"max_tokens boolean", "", cmpl, js, `{"prompt":"a","max_tokens":true}`, 400, "valid integer"},
		{"max_tokens list", "", cmpl, js, `{"prompt":"a","max_tokens":[4]}`, 400, "valid integer"},
		{"max_tokens object", "", cmpl, js, `{"prompt":"a","max_tokens":{}}`, 400, "valid integer"},
		{"max_completion_tokens 1e12", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":1000000000000}`, 400, "maximum context length"},
		{"max_completion_tokens int64 max", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":9223372036854775807}`, 400, "maximum context length"},
		{"max_completion_tokens 1e400", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":1e400}`, 400, "max_completion_tokens"},
		{"max_completion_tokens negative", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":-5}`, 400, "max_completion_tokens must be at least 1"},
		{"max_completion_tokens zero", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":0}`, 400, "max_completion_tokens must be at least 1"},
		{"max_completion_tokens fraction", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":2.25}`, 400, "valid integer"},
		{"max_completion_tokens string", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":"x"}`, 400, "valid integer"},
		{"max_completion_tokens on completions", "", cmpl, js, `{"prompt":"a","max_completion_tokens":9223372036854775807}`, 400, "maximum context length"},
		{"chat max_tokens 1e12", "", chat, js, `{"messages":[{"role":"user","content":"a"}],"max_tokens":1000000000000}`, 400, "maximum context length"},
		{"n 2", "", cmpl, js, `{"prompt":"a","n":2}`, 400, "only n = 1"},
		{"n huge", "", cmpl, js, `{"prompt":"a","n":1e300}`, 400, "n: "},
		// The body is one JSON object, nothing else.
		{"trailing garbage", "", cmpl, js, `{"prompt":"a"} x`, 400, "after the JSON object"},
		{"trailing object", "", cmpl, js, `{"prompt":"a"}{"prompt":"b"}`, 400, "after the JSON object"},
		{"truncated", "", cmpl, js, `{"prompt":"a"`, 400, "request body"},
		{"empty body", "", cmpl, js, ``, 400, "request body"},
		{"whitespace body", "", cmpl, js, "  \n\t", 400, "request body"},
		{"list body", "", cmpl, js, `[{"prompt":"a"}]`, 400, "expected a JSON object"},
		{"string body", "", cmpl, js, `"prompt"`, 400, "expected a JSON object"},
		{"null body", "", cmpl, js, `null`, 400, "expected a JSON object"},
		{"invalid UTF-8 structure", "", cmpl, js, "{\"prompt\":\"a\"\x00}", 400, "request body"},
		{"duplicate key", "", cmpl, js, `{"prompt":"a","max_tokens":2,"max_tokens":3}`, 400, `duplicate key "max_tokens"`},
		{"duplicate nested key", "", chat, js, `{"messages":[{"role":"user","role":"system","content":"a"}]}`, 400, `duplicate key "role"`},
		{"duplicate stream option", "", cmpl, js, `{"prompt":"a","stream_options":{"include_usage":true,"include_usage":false}}`, 400, `duplicate key "include_usage"`},
		// Prompts and messages.
		{"negative token id", "", cmpl, js, `{"prompt":[1,-1,2]}`, 400, "Token id -1 is out of vocabulary"},
		{"negative token id in batch", "", cmpl, js, `{"prompt":[[3,-7]]}`, 400, "Token id -7 is out of vocabulary"},
		{"token id beyond int64", "", cmpl, js, `{"prompt":[99999999999999999999]}`, 400, "prompt"},
		{"fractional token id", "", cmpl, js, `{"prompt":[1.5]}`, 400, "prompt"},
		{"empty token list", "", cmpl, js, `{"prompt":[]}`, 400, "prompt"},
		{"empty inner token list", "", cmpl, js, `{"prompt":[[]]}`, 400, "The decoder prompt cannot be empty"},
		{"missing prompt", "", cmpl, js, `{"max_tokens":3}`, 400, "prompt: required"},
		{"null prompt", "", cmpl, js, `{"prompt":null}`, 400, "prompt: required"},
		{"prompt batch of two", "", cmpl, js, `{"prompt":["a","b"]}`, 400, "one prompt per request"},
		{"prompt object", "", cmpl, js, `{"prompt":{"text":"a"}}`, 400, "prompt: expected"},
		{"prompt number", "", cmpl, js, `{"prompt":7}`, 400, "prompt: expected"},
		{"missing messages", "", chat, js, `{"max_tokens":3}`, 400, "messages"},
		{"empty messages", "", chat, js, `{"messages":[]}`, 400, "messages"},
		{"messages object", "", chat, js, `{"messages":{"role":"user"}}`, 400, "messages"},
		{"message content number", "", chat, js, `{"messages":[{"role":"user","content":5}]}`, 400, "messages[0].content"},
		{"chat with prompt", "", chat, js, `{"prompt":"a","messages":[{"role":"user","content":"a"}]}`, 400, "not a prompt"},
		{"stream string", "", cmpl, js, `{"prompt":"a","stream":"true"}`, 400, "stream"},
		{"model number", "", cmpl, js, `{"prompt":"a","model":5}`, 400, "model"},
		{"unknown model", "", cmpl, js, `{"prompt":"a","model":"gpt-9"}`, 404, "does not exist"},
		// Content types: JSON or none (vLLM's FastAPI reads both as JSON).
		{"text/plain", "", cmpl, "text/plain", `{"prompt":"a"}`, 400, "Content-Type"},
		{"form", "", cmpl, "application/x-www-form-urlencoded", `prompt=a`, 400, "Content-Type"},
		{"multipart", "", chat, "multipart/form-data; boundary=x", `--x--`, 400, "Content-Type"},
		{"malformed content type", "", cmpl, "application/", `{"prompt":"a"}`, 400, "Content-Type"},
		// Size.
		{"oversized body", "", cmpl, js, `{"prompt":"` + strings.Repeat("a ", abuseMaxBody) + `"}`, 413, "more than 65536 bytes"},
		{"oversized chat body", "", chat, js, `{"messages":[{"role":"user","content":"` + strings.Repeat("x", abuseMaxBody) + `"}]}`, 413, "more than"},
		// Methods and paths.
		{"GET completions", "GET", cmpl, "", ``, 405, "Method Not Allowed"},
		{"PUT completions", "PUT", cmpl, js, `{"prompt":"a"}`, 405, "Method Not Allowed"},
		{"DELETE chat", "DELETE", chat, "", ``, 405, "Method Not Allowed"},
		{"PATCH chat", "PATCH", chat, js, `{}`, 405, "Method Not Allowed"},
		{"POST models", "POST", "/v1/models", js, `{}`, 405, "Method Not Allowed"},
		{"POST health", "POST", "/health", js, `{}`, 405, "Method Not Allowed"},
		{"DELETE metrics", "DELETE", "/metrics", "", ``, 405, "Method Not Allowed"},
		{"unknown path", "POST", "/v1/embeddings", js, `{}`, 404, "Invalid URL"},
		{"unknown GET path", "GET", "/admin", "", ``, 404, "Invalid URL"},
		{"trailing slash", "POST", cmpl + "/", js, `{"prompt":"a"}`, 404, "Invalid URL"},
		{"root", "GET", "/", "", ``, 404, "Invalid URL"},
		{"v2 path", "POST", "/v2/completions", js, `{"prompt":"a"}`, 404, "Invalid URL"},
	}
	if len(cases) < 50 {
		t.Fatalf("%d abuse cases; the table should hold at least 50", len(cases))
	}
	for _, c := range cases {
		method := c.method
		if method == "" {
			method = http.MethodPost
		}
		req, err := http.NewRequest(method, base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		checkAPIError(t, c.name, resp, c.code, c.want)
	}
	// No content type at all is read as JSON, as vLLM reads it.
	req, _ := http.NewRequest(http.MethodPost, base+cmpl, strings.NewReader(`{"prompt":"a","max_tokens":2}`))
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("no Content-Type: %v %v; want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	// Keys match exactly, as pydantic matches them: "MAX_TOKENS" and
	// "ſtream" are not max_tokens and stream (encoding/json alone would
	// take them), so this is a whole answer of the default 16 tokens.
	resp, err := client.Post(base+cmpl, js, strings.NewReader(`{"prompt":"a","MAX_TOKENS":1000000000000,"ſtream":true,"Max_Tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	err = json.NewDecoder(resp.Body).Decode(&whole)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(whole.Choices) != 1 || len(strings.Fields(whole.Choices[0].Text)) != defaultCompletionTokens {
		t.Errorf("case-folded keys: %d %+v (%v); want a whole answer of %d words", resp.StatusCode, whole, err, defaultCompletionTokens)
	}
	goodRequest(t, client, base)
}

// A body announced larger than the limit is refused with 413 from its
// headers alone: the client is not made to send it, and the server
// reads none of it.
func TestOversizedBodyRefusedUpFront(t *testing.T) {
	_, base := start(t, nil, Options{TimeScale: 50, Limits: Limits{MaxBody: abuseMaxBody}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// One gigabyte announced, a few bytes sent, and the client waits.
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"prompt\":", 1<<30)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to an announced 1 GiB body: %v", err)
	}
	checkAPIError(t, "1 GiB Content-Length", resp, 413, fmt.Sprintf("more than %d bytes", abuseMaxBody))
	goodRequest(t, &http.Client{Timeout: 10 * time.Second}, base)
}

// Half-sent bodies hold at most MaxBodyReaders readers: one more request
// is answered 503 with Retry-After at once, without waiting for its body,
// and a held body that completes is still served.
func TestBodyReadersAreBounded(t *testing.T) {
	const readers = 4
	srv, base := start(t, nil, Options{TimeScale: 50, Limits: Limits{MaxBodyReaders: readers, BodyTimeout: 60 * time.Second}})
	addr := strings.TrimPrefix(base, "http://")
	body := `{"prompt":"a b","max_tokens":3,"ignore_eos":true}`
	half := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:5])
		return conn
	}
	var held []net.Conn
	for range readers {
		held = append(held, half())
	}
	// Wait (bounded) until the server is reading all of them.
	for deadline := time.Now().Add(10 * time.Second); len(srv.bodies) < readers; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bodies being read; want %d", len(srv.bodies), readers)
		}
	}
	// Beyond the bound: 503 from the headers alone, also for a half-sent
	// body, and the connection closes.
	for range 3 {
		conn := half()
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request beyond %d half-sent bodies: %v", readers, err)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "1" {
			t.Errorf("Retry-After %q, want 1", ra)
		}
		checkAPIError(t, "beyond the body readers", resp, 503, "bodies are being received")
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("after the 503 the connection is still open (%v)", err)
		}
	}
	// A held body that completes is served, and frees its reader.
	fmt.Fprint(held[0], body[5:])
	resp, err := http.ReadResponse(bufio.NewReader(held[0]), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a held body completed: %v %v; want 200", resp, err)
	}
	resp.Body.Close()
	goodRequest(t, &http.Client{Timeout: 10 * time.Second}, base)
}
