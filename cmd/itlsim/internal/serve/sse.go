package serve

import "strconv"

// A streamed chunk is one server-sent event of OpenAI's chunk object. Its
// bytes are those encoding/json and strconv.Quote wrote when the event was
// built field by field (sse_test.go keeps that encoder and compares the two
// on random streams): what does not change over a stream — the id, the
// object, created, the model — is encoded once per stream (ssePrefix), and
// a chunk appends its text, finish reason and usage to the response's
// buffer without allocating. The text needs no escaping: every word is
// lower-case ASCII letters (TestWordsNeedNoEscaping).

// ssePrefix is every chunk event's start, up to and including `"choices":`.
func (rw *responder) ssePrefix() []byte {
	object := "text_completion"
	if rw.chat {
		object = "chat.completion.chunk"
	}
	b := make([]byte, 0, 96+len(rw.id)+len(rw.model))
	b = append(b, `data: {"id":`...)
	b = strconv.AppendQuote(b, rw.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, rw.s.created, 10)
	b = append(b, `,"model":`...)
	b = strconv.AppendQuote(b, rw.model)
	b = append(b, `,"choices":`...)
	return b
}

// chunk appends one SSE event carrying n tokens to rw.buf.
func (rw *responder) chunk(n int, last bool) {
	if rw.prefix == nil {
		rw.prefix = rw.ssePrefix()
	}
	first := rw.sent == 0
	b := append(rw.buf, rw.prefix...)
	b = append(b, `[{"index":0,`...)
	if rw.chat {
		b = append(b, `"delta":{`...)
		if first {
			b = append(b, `"role":"assistant",`...)
		}
		b = append(b, `"content":"`...)
		b = rw.text(b, n)
		b = append(b, `"},`...)
	} else {
		b = append(b, `"text":"`...)
		b = rw.text(b, n)
		b = append(b, `",`...)
	}
	b = append(b, `"logprobs":null,"finish_reason":`...)
	if last {
		b = strconv.AppendQuote(b, rw.st.finish)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, "}]"...)
	rw.buf = rw.closeEvent(b, rw.continuous)
}

// usageChunk appends include_usage's last chunk: no choices, the usage.
func (rw *responder) usageChunk() {
	if rw.prefix == nil {
		rw.prefix = rw.ssePrefix()
	}
	b := append(rw.buf, rw.prefix...)
	rw.buf = rw.closeEvent(append(b, "[]"...), true)
}

// closeEvent appends the usage (as encoding/json writes usageOf's map: its
// keys sorted) when asked, and the event's end.
func (rw *responder) closeEvent(b []byte, usage bool) []byte {
	if usage {
		b = append(b, `,"usage":{"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(rw.sent), 10)
		b = append(b, `,"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(rw.st.prompt), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(rw.st.prompt+rw.sent), 10)
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}
