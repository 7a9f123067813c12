package record

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/itlsim/itlsim/reports/ingest"
)

// The stream reader takes any server's bytes: never a panic; every
// outcome is named; the chunks are kept whatever the outcome, with as many
// token counts as chunk times (or none, when unknown), none below one; an
// accepted stream has output and its tokens add up; and what it read is
// written as a line analyze's reader takes.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"data: {\"id\":\"a\",\"choices\":[{\"text\":\" x\"}],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\n\ndata: [DONE]\n",
		"data: {\"error\":{\"message\":\"x\"}}\n\n",
		"data: not json\n\n",
		": comment\n\nevent: x\ndata: [DONE]\n",
		"data: {\"id\":\"\xff\",\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":5}}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":1}}\r\n\r\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\r\n\r\ndata: [DONE]\r\n",
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, continuous bool) {
		r := &recorder{o: Options{TimeScale: 1, ContinuousUsage: continuous}, t0: time.Now()}
		var s Stream
		var err string
		s.Outcome, err = r.read(context.Background(), bytes.NewReader(body), &s)
		s.Err = err
		if !slices.Contains(ingest.Outcomes, s.Outcome) || (s.Outcome == OutcomeOK) != (err == "") {
			t.Fatalf("outcome %q, error %q", s.Outcome, err)
		}
		if s.ChunkTokens != nil && len(s.ChunkTimes) != len(s.ChunkTokens) {
			t.Fatalf("%d chunk times, %d token counts", len(s.ChunkTimes), len(s.ChunkTokens))
		}
		sum := 0
		for _, n := range s.ChunkTokens {
			if n < 1 {
				t.Fatalf("a chunk of %d tokens", n)
			}
			sum += n
		}
		if s.ChunkTokens != nil && sum != s.OutputTokens {
			t.Fatalf("chunks of %d tokens, output %d", sum, s.OutputTokens)
		}
		if s.Outcome == OutcomeOK && len(s.ChunkTimes) == 0 {
			t.Fatalf("accepted a stream without output")
		}
		var buf bytes.Buffer
		if err := WriteStreams(&buf, "f", []Stream{s}); err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.Parse("f.jsonl", buf.Bytes(), ingest.FormatStreams); err != nil {
			t.Fatalf("analyze refuses what record wrote: %v\n%s", err, buf.Bytes())
		}
	})
}
