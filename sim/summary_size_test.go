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
