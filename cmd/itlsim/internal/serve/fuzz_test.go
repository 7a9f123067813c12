package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// The request parsers take any client's bytes: never a panic, a count
// ≥ 1 or an error.
func FuzzPromptTokens(f *testing.F) {
	for _, s := range []string{`"hello world"`, `[1,2,3]`, `[[1,2]]`, `["a b"]`, `null`, `{}`, `[["x"]]`, `[1.5]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		n, err := promptTokens(json.RawMessage(raw))
		if err == nil && n < 0 {
			t.Fatalf("%q: %d tokens", raw, n)
		}
		var ms []message
		if json.Unmarshal(raw, &ms) == nil {
			if n, err := messageTokens(ms); err == nil && n < 0 {
				t.Fatalf("%q: %d message tokens", raw, n)
			}
		}
	})
}

// The request decoder takes any client's body: never a panic, and a
// request it accepts holds what the server relies on before allocating
// for it (decodeRequest's contract).
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"a b c","max_tokens":4}`,
		`{"prompt":[1,2,3],"max_tokens":"7","stream":true,"stream_options":{"include_usage":true}}`,
		`{"prompt":[[5,6]],"max_completion_tokens":1e3,"n":1}`,
		`{"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":9223372036854775807}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}],"max_tokens":10.0}`,
		`{"prompt":"a","max_tokens":1e400}`,
		`{"prompt":"a","max_tokens":-1}`,
		`{"prompt":"a","max_tokens":2,"max_tokens":3}`,
		`{"prompt":"a"} x`,
		`{"prompt":[-1]}`,
		`{"model":"m","prompt":"a","ignore_eos":true}`,
	} {
		for _, maxLen := range []int{0, 16, 131072} {
			f.Add([]byte(s), false, maxLen)
			f.Add([]byte(s), true, maxLen)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, chat bool, maxModelLen int) {
		if maxModelLen < 0 || maxModelLen > 1<<24 {
			t.Skip() // the server's context comes from a validated scenario
		}
		p, berr := decodeRequest(body, chat, maxModelLen)
		if berr != nil {
			if berr.code != 400 || berr.msg == "" {
				t.Fatalf("%q: refused with %d %q; want 400 and a message", body, berr.code, berr.msg)
			}
			return
		}
		if _, err := checkJSON(body); err != nil {
			t.Fatalf("%q: accepted, but checkJSON says %v", body, err)
		}
		if p.prompt < 1 || p.maxTokens < 1 {
			t.Fatalf("%q: accepted with prompt %d, max_tokens %d; want both ≥ 1", body, p.prompt, p.maxTokens)
		}
		if maxModelLen > 0 && p.prompt+p.maxTokens > maxModelLen {
			t.Fatalf("%q: accepted %d + %d tokens over a context of %d", body, p.prompt, p.maxTokens, maxModelLen)
		}
		if maxModelLen == 0 && p.maxTokens > math.MaxInt32 {
			t.Fatalf("%q: accepted max_tokens %d without a context", body, p.maxTokens)
		}
		if !chat && p.maxTokens > defaultCompletionTokens && !bytes.Contains(bytes.ToLower(body), []byte("max")) && !bytes.Contains(body, []byte(`\`)) {
			t.Fatalf("%q: a completion without max_tokens got %d, want ≤ %d", body, p.maxTokens, defaultCompletionTokens)
		}
	})
}
