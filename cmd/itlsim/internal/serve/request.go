package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
)

// defaultCompletionTokens is /v1/completions' max_tokens when a request
// gives none, as OpenAI's and vLLM's (CompletionRequest.max_tokens = 16).
const defaultCompletionTokens = 16

// badRequest is a request serve refuses before anything is allocated for
// it: an HTTP status and vLLM's wording where vLLM has one.
type badRequest struct {
	code int
	msg  string
}

func (b *badRequest) Error() string { return b.msg }

func bad(format string, args ...any) *badRequest {
	return &badRequest{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// request is the part of a completion or chat request the server reads.
// Counts stay raw until parseCount has checked them: a client's number may
// be anything JSON can write.
type request struct {
	Model               *string         `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []message       `json:"messages"`
	MaxTokens           json.RawMessage `json:"max_tokens"`
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	IgnoreEOS           *bool           `json:"ignore_eos"`
	Stream              *bool           `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         *bool `json:"include_usage"`
		ContinuousUsageStats *bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	N json.RawMessage `json:"n"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ask is a checked request: what the driver needs to run it and what
// the response needs to answer it.
type parsed struct {
	model      string
	prompt     int
	maxTokens  int // ≥ 1: the output never exceeds it
	ignoreEOS  bool
	stream     bool
	usage      bool
	continuous bool
}

// decodeRequest checks a request body completely before the server
// allocates anything for it, and answers as vLLM's OpenAI server does
// (its pydantic models, then its context-length check) where vLLM
// answers; where vLLM is lenient, serve is strict and says so:
//
//   - the body is one JSON object and nothing after it (vLLM: JSON decode
//     error, 400);
//   - no object repeats a key anywhere in the body. vLLM's json.loads keeps
//     the last of repeated keys without a word; serve refuses them, since
//     the two readings of such a body disagree on what was asked;
//   - keys match exactly, as pydantic matches them: "MAX_TOKENS" is an
//     unknown key, ignored as vLLM ignores it (encoding/json alone would
//     fold it onto max_tokens);
//   - max_tokens, max_completion_tokens and n are integers: a JSON integer,
//     a number with no fractional part (10.0, 1e3) or a string of one ("10"),
//     as pydantic's lax mode takes them; 1.5, true, [] are refused (pydantic:
//     "Input should be a valid integer"); null is absent;
//   - max_tokens ≥ 1 (vLLM's SamplingParams: "max_tokens must be at least 1");
//   - prompt + max_tokens ≤ max_model_len (vLLM's "This model's maximum
//     context length is N tokens. However, you requested M tokens ..."),
//     whatever ignore_eos says, for any size of number;
//   - token ids are ≥ 0 (vLLM: "Token id -1 is out of vocabulary");
//   - stream, ignore_eos and the stream options are JSON booleans (pydantic
//     also takes "true" and 1; serve does not).
//
// Without max_tokens a completion is capped at 16 tokens (OpenAI's and
// vLLM's default), a chat at what the context leaves after the prompt
// (vLLM's default). maxModelLen 0 (a replay) checks no context.
func decodeRequest(body []byte, chat bool, maxModelLen int) (parsed, *badRequest) {
	var p parsed
	foreign, err := checkJSON(body)
	if err != nil {
		return p, bad("request body: %v", err)
	}
	if foreign {
		// encoding/json matches keys case-insensitively ("MAX_TOKENS",
		// "ſtream" would set fields); pydantic matches them exactly and
		// ignores the rest, so keys other than the fields' are dropped.
		if body, err = dropForeignKeys(body); err != nil {
			return p, bad("request body: %v", err)
		}
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return p, bad("%s: expected %s, got a JSON %s", te.Field, jsonKind(te.Type.String()), te.Value)
		}
		return p, bad("request body: %v", err)
	}
	if req.Model != nil {
		p.model = *req.Model
	}
	if n, set, err := parseCount("n", req.N); err != nil {
		return p, err
	} else if set && (n.Sign() <= 0 || !n.IsInt64() || n.Int64() != 1) {
		return p, bad("n: only n = 1 is served, got %s", n)
	}
	if chat {
		if req.Prompt != nil {
			return p, bad("prompt: a chat request sends messages, not a prompt")
		}
		p.prompt, err = messageTokens(req.Messages)
	} else {
		p.prompt, err = promptTokens(req.Prompt)
	}
	if err != nil {
		return p, bad("%v", err)
	}
	mt, mtSet, berr := parseCount("max_tokens", req.MaxTokens)
	if berr != nil {
		return p, berr
	}
	mct, mctSet, berr := parseCount("max_completion_tokens", req.MaxCompletionTokens)
	if berr != nil {
		return p, berr
	}
	for _, c := range []struct {
		name string
		v    *big.Int
		set  bool
	}{{"max_tokens", mt, mtSet}, {"max_completion_tokens", mct, mctSet}} {
		if c.set && c.v.Sign() < 1 {
			return p, bad("%s must be at least 1, got %s.", c.name, c.v)
		}
	}
	// vLLM's chat takes max_completion_tokens over the deprecated
	// max_tokens; a completion reads max_tokens (and, here, the other when
	// it is the only one given).
	want, set := mt, mtSet
	if mctSet && (chat || !mtSet) {
		want, set = mct, true
	}
	if maxModelLen > 0 {
		if p.prompt >= maxModelLen {
			return p, bad("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", maxModelLen, p.prompt)
		}
		if !set && chat {
			want, set = big.NewInt(int64(maxModelLen-p.prompt)), true
		}
	}
	if !set {
		want = big.NewInt(defaultCompletionTokens)
	}
	if maxModelLen > 0 {
		total := new(big.Int).Add(want, big.NewInt(int64(p.prompt)))
		if total.Cmp(big.NewInt(int64(maxModelLen))) > 0 {
			return p, bad("This model's maximum context length is %d tokens. However, you requested %s tokens (%d in the messages, %s in the completion). Please reduce the length of the messages or completion.", maxModelLen, total, p.prompt, want)
		}
	} else if !want.IsInt64() || want.Int64() > math.MaxInt32 {
		return p, bad("max_tokens: %s is more than %d tokens", want, math.MaxInt32)
	}
	p.maxTokens = int(want.Int64())
	p.ignoreEOS = req.IgnoreEOS != nil && *req.IgnoreEOS
	p.stream = req.Stream != nil && *req.Stream
	if o := req.StreamOptions; o != nil {
		p.usage = o.IncludeUsage != nil && *o.IncludeUsage
		p.continuous = o.ContinuousUsageStats != nil && *o.ContinuousUsageStats
	}
	return p, nil
}

// jsonKind names a Go type as a JSON kind for an error message.
func jsonKind(goType string) string {
	switch {
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case goType == "string" || goType == "*string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "struct") || strings.HasPrefix(goType, "*struct") || strings.HasPrefix(goType, "serve."):
		return "an object"
	}
	return goType
}

// parseCount reads an integer field as pydantic's lax mode does: a JSON
// integer of any size, a number without a fractional part, or a string of
// one; null or absent is not set.
func parseCount(name string, raw json.RawMessage) (*big.Int, bool, *badRequest) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, false, bad("%s: Input should be a valid integer", name)
		}
		text = strings.TrimSpace(text)
		if !json.Valid([]byte(text)) || text == "" || !(text[0] == '-' || text[0] >= '0' && text[0] <= '9') {
			return nil, false, bad("%s: Input should be a valid integer, unable to parse string as an integer", name)
		}
	} else if !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return nil, false, bad("%s: Input should be a valid integer, got %s", name, kindOf(raw[0]))
	}
	if n, ok := new(big.Int).SetString(text, 10); ok {
		return n, true, nil
	}
	// A number in float form: 10.0, 1e3. Its exponent is bounded, so that
	// 1e999999999 cannot make big.Float allocate a huge mantissa.
	f, _, err := big.ParseFloat(text, 10, 64, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return nil, false, bad("%s: Input should be a valid integer", name)
	}
	if !f.IsInt() {
		return nil, false, bad("%s: Input should be a valid integer, got a number with a fractional part", name)
	}
	if f.MantExp(nil) > 256 { // beyond 2^256: no count is that large
		return nil, false, bad("%s: Input should be a valid integer, %s is out of range", name, text)
	}
	n, _ := f.Int(nil)
	return n, true, nil
}

func kindOf(c byte) string {
	switch c {
	case 't', 'f':
		return "a boolean"
	case '[':
		return "a list"
	case '{':
		return "an object"
	}
	return "something else"
}

// fieldNames are every key the request's types read, at any depth.
var fieldNames = map[string]bool{"model": true, "prompt": true, "messages": true, "max_tokens": true,
	"max_completion_tokens": true, "ignore_eos": true, "stream": true, "stream_options": true, "n": true,
	"include_usage": true, "continuous_usage_stats": true, "role": true, "content": true, "type": true, "text": true}

// dropForeignKeys rewrites body without the keys that are not in
// fieldNames, at any depth; numbers keep their text.
func dropForeignKeys(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if !fieldNames[k] {
					delete(v, k)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return json.Marshal(v)
}

// checkJSON accepts one JSON object and nothing after it, with no key
// repeated in any object; foreign says some key is not in fieldNames.
func checkJSON(body []byte) (foreign bool, err error) {
	if !json.Valid(body) {
		// Valid says nothing of where: decode for the position.
		dec := json.NewDecoder(bytes.NewReader(body))
		var v any
		if err := dec.Decode(&v); err != nil {
			return false, err
		}
		return false, fmt.Errorf("unexpected data after the JSON object at byte %d", dec.InputOffset())
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return false, errors.New("expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		keys    map[string]bool // nil for a list
		wantKey bool            // an object's next string is a key
	}
	var stack []frame
	valueDone := func() { // a value ended: its object wants a key next
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return foreign, nil
		}
		if err != nil {
			return false, err
		}
		top := len(stack) - 1
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, frame{keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
				valueDone()
			}
		case string:
			if top >= 0 && stack[top].keys != nil && stack[top].wantKey {
				if stack[top].keys[tok] {
					return false, fmt.Errorf("duplicate key %s", strconv.Quote(tok))
				}
				foreign = foreign || !fieldNames[tok]
				stack[top].keys[tok] = true
				stack[top].wantKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// promptTokens counts a completion prompt: a string (words, see
// textTokens), token ids, or a batch of one of either.
func promptTokens(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errors.New("prompt: required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return textTokens(text), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		if len(ids) == 0 {
			return 0, errors.New("prompt: The decoder prompt cannot be empty")
		}
		for _, id := range ids {
			if id < 0 {
				return 0, fmt.Errorf("prompt: Token id %d is out of vocabulary", id)
			}
		}
		return len(ids), nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(raw, &batch) == nil {
		if len(batch) != 1 {
			return 0, fmt.Errorf("prompt: one prompt per request is served, got %d", len(batch))
		}
		if b := bytes.TrimSpace(batch[0]); len(b) > 0 && b[0] == '[' {
			return promptIDs(b)
		}
		var text string
		if json.Unmarshal(batch[0], &text) == nil {
			return textTokens(text), nil
		}
	}
	return 0, errors.New("prompt: expected a string, a list of token ids, or a list of one of either")
}

// promptIDs counts a list of token ids (inside a batch of one).
func promptIDs(raw json.RawMessage) (int, error) {
	var ids []int64
	if json.Unmarshal(raw, &ids) != nil {
		return 0, errors.New("prompt: expected a list of token ids (integers)")
	}
	if len(ids) == 0 {
		return 0, errors.New("prompt: The decoder prompt cannot be empty")
	}
	for _, id := range ids {
		if id < 0 {
			return 0, fmt.Errorf("prompt: Token id %d is out of vocabulary", id)
		}
	}
	return len(ids), nil
}

// messageTokens counts a chat's messages: each message's text (a string
// or text parts), at least one: the chat template's own tokens are not
// counted, but a chat of empty messages still has a prompt.
func messageTokens(ms []message) (int, error) {
	if len(ms) == 0 {
		return 0, errors.New("messages: at least one message expected")
	}
	n := 0
	for i, m := range ms {
		if len(m.Content) == 0 || string(m.Content) == "null" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			n += textTokens(text)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return 0, fmt.Errorf("messages[%d].content: expected a string or a list of content parts", i)
		}
		for _, p := range parts {
			n += textTokens(p.Text)
		}
	}
	return max(1, n), nil
}

// textTokens approximates a text's token count by its whitespace-separated
// words, at least one: close to BPE counts for English prose of short
// words, and exact for the prompts itlsim record synthesises (one word per
// token).
func textTokens(s string) int { return max(1, len(strings.Fields(s))) }
