package record

import (
	"bytes"
	"context"
	"testing"
)

// The stream reader takes any server's bytes: never a panic; a stream it
// accepts has as many token counts as chunk times, none below one.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"data: {\"id\":\"a\",\"choices\":[{\"text\":\" x\"}],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\n\ndata: [DONE]\n",
		"data: {\"error\":{\"message\":\"x\"}}\n\n",
		"data: not json\n\n",
		": comment\n\nevent: x\ndata: [DONE]\n",
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, continuous bool) {
		r := &recorder{o: Options{TimeScale: 1, ContinuousUsage: continuous}}
		var s Stream
		if err := r.read(context.Background(), bytes.NewReader(body), &s); err != "" {
			return
		}
		if len(s.ChunkTimes) == 0 || len(s.ChunkTimes) != len(s.ChunkTokens) {
			t.Fatalf("accepted %d chunk times, %d token counts", len(s.ChunkTimes), len(s.ChunkTokens))
		}
		for _, n := range s.ChunkTokens {
			if n < 1 {
				t.Fatalf("a chunk of %d tokens", n)
			}
		}
	})
}
