package sim

import (
	"testing"
	"unsafe"
)

// TestStreamSummaryStaysSmall: a run keeps one StreamSummary per request
// (a million-request run, a million of them), so its size is the engine's
// retained memory per finished request. The small fields share words;
// this keeps a new field from silently costing another word of padding.
func TestStreamSummaryStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(StreamSummary{}); n > 144 {
		t.Errorf("StreamSummary is %d bytes, want at most 144: group small fields so they share words", n)
	}
}

// TestRequestHotLayout: every step reads a running stream's per-token
// fields and its scheduler fields; they are laid out as one cache line of
// the request's own, then the Seq's step fields, and the request fits the
// 640-byte allocation class (speculation state is a buffer of the slot's). A field added to the first line pushes the
// Seq off its line; one added elsewhere may cost a larger class.
func TestRequestHotLayout(t *testing.T) {
	var q request
	if off := unsafe.Offsetof(q.seq); off != 64 {
		t.Errorf("request.seq is at offset %d, want 64: keep the per-token fields in the first cache line", off)
	}
	if n := unsafe.Sizeof(q); n > 640 {
		t.Errorf("request is %d bytes, want at most 640", n)
	}
	if off := unsafe.Offsetof(q.seq.KV); off > 64 {
		t.Errorf("Seq.KV is at offset %d, want at most 64: the step fields come first", off)
	}
}
