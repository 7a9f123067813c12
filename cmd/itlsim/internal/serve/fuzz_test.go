package serve

import (
	"encoding/json"
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
