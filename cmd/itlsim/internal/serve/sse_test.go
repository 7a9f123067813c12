package serve

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The chunk encoder writes the bytes of the field-by-field encoder it
// replaced, for completions and chats, first, middle and last chunks of
// any size, the usage options, and ids and model names that need quoting.
func TestChunkIsTheReferenceEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	models := []string{"sim-model", `we"ird\\name`, "modèle\t<&>", "\u2028x", ""}
	for trial := range 400 {
		s := &Server{created: r.Int64N(2e9)}
		st := &stream{id: r.IntN(1 << 20), prompt: r.IntN(5000), finish: []string{"stop", "length"}[r.IntN(2)]}
		mk := func() *responder {
			rw := &responder{s: s, st: st, chat: r.IntN(2) == 0, model: models[trial%len(models)],
				usage: r.IntN(2) == 0, continuous: r.IntN(2) == 0}
			rw.id = "cmpl-" + strconv.Itoa(st.id)
			return rw
		}
		got := mk()
		want := *got
		chunks := 1 + r.IntN(6)
		for i := range chunks {
			n, last := 1+r.IntN(40), i == chunks-1
			got.chunk(n, last)
			want.referenceChunk(n, last)
			if last && got.usage {
				got.usageChunk()
				want.referenceUsageChunk()
			}
		}
		if !bytes.Equal(got.buf, want.buf) {
			t.Fatalf("trial %d:\n got %s\nwant %s", trial, got.buf, want.buf)
		}
		if got.sent != want.sent {
			t.Fatalf("trial %d: sent %d, want %d", trial, got.sent, want.sent)
		}
	}
}

// The encoder writes the words into a JSON string as they are: none may
// need escaping.
func TestWordsNeedNoEscaping(t *testing.T) {
	for _, w := range words {
		b, _ := json.Marshal(" " + w)
		if string(b) != `" `+w+`"` {
			t.Errorf("word %q encodes as %s", w, b)
		}
	}
}

// Once its buffer has grown, a chunk allocates nothing.
func TestChunkAllocatesNothing(t *testing.T) {
	s := &Server{created: 1}
	st := &stream{id: 7, prompt: 100, finish: "length"}
	for _, chat := range []bool{false, true} {
		rw := &responder{s: s, st: st, chat: chat, model: "sim-model", id: "cmpl-7", continuous: true}
		rw.chunk(1, false)
		if n := testing.AllocsPerRun(100, func() {
			rw.buf = rw.buf[:0]
			rw.chunk(4, false)
		}); n != 0 {
			t.Errorf("chat %v: %g allocations per chunk, want 0", chat, n)
		}
	}
}

// BenchmarkChunkEncoding is the CPU of encoding one chunk event (one
// token, usage in every chunk, as record asks for), against the encoder
// it replaced.
func BenchmarkChunkEncoding(b *testing.B) {
	s := &Server{created: 1764720000}
	st := &stream{id: 123, prompt: 512, finish: "length"}
	for _, bc := range []struct {
		name string
		enc  func(*responder)
	}{
		{"prefix", func(rw *responder) { rw.chunk(1, false) }},
		{"reference", func(rw *responder) { rw.referenceChunk(1, false) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rw := &responder{s: s, st: st, model: "sim-model", id: "cmpl-123", continuous: true}
			b.ReportAllocs()
			for b.Loop() {
				rw.buf = rw.buf[:0]
				bc.enc(rw)
			}
		})
	}
}

// referenceChunk is the encoder chunk replaced, field by field with
// encoding/json: it appends one SSE event carrying n tokens to rw.buf.
func (rw *responder) referenceChunk(n int, last bool) {
	first := rw.sent == 0
	var text []byte
	text = rw.text(text, n)
	var choice bytes.Buffer
	choice.WriteString(`{"index":0,`)
	content, _ := json.Marshal(string(text))
	if rw.chat {
		choice.WriteString(`"delta":{`)
		if first {
			choice.WriteString(`"role":"assistant",`)
		}
		choice.WriteString(`"content":`)
		choice.Write(content)
		choice.WriteString(`},`)
	} else {
		choice.WriteString(`"text":`)
		choice.Write(content)
		choice.WriteString(`,`)
	}
	choice.WriteString(`"logprobs":null,"finish_reason":`)
	if last {
		choice.WriteString(strconv.Quote(rw.st.finish))
	} else {
		choice.WriteString("null")
	}
	choice.WriteString("}")
	rw.referenceEvent(`[`+choice.String()+`]`, rw.continuous)
}

// usageChunk appends include_usage's last chunk: no choices, the usage.
func (rw *responder) referenceUsageChunk() { rw.referenceEvent(`[]`, true) }

func (rw *responder) referenceEvent(choices string, usage bool) {
	object := "text_completion"
	if rw.chat {
		object = "chat.completion.chunk"
	}
	b := rw.buf
	b = append(b, `data: {"id":`...)
	b = strconv.AppendQuote(b, rw.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, rw.s.created, 10)
	b = append(b, `,"model":`...)
	b = strconv.AppendQuote(b, rw.model)
	b = append(b, `,"choices":`...)
	b = append(b, choices...)
	if usage {
		u, _ := json.Marshal(rw.usageOf())
		b = append(b, `,"usage":`...)
		b = append(b, u...)
	}
	b = append(b, "}\n\n"...)
	rw.buf = b
}
