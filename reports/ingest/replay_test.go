package ingest

import (
	"os"
	"strings"
	"testing"
)

func replayFixture(t *testing.T) []Recording {
	t.Helper()
	data, err := os.ReadFile("testdata/streams_small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Parse("streams_small.jsonl", data, "")
	if err != nil {
		t.Fatal(err)
	}
	return recs[:1] // run "a": 2 streams with output, one failed
}

func replayOpts() ReplayOptions {
	return ReplayOptions{PauseMS: "500", PauseAt: PauseAtRandom, Seed: 1,
		Smoothing: []string{"none"}, Flush: []string{"none"}, Network: []string{"none"}}
}

// Without pauses and through no mitigation, a replay gives back every
// stream's measured times exactly.
func TestReplayNoneKeepsTimes(t *testing.T) {
	recs := replayFixture(t)
	o := replayOpts()
	plan, err := o.PausePlan()
	if err != nil {
		t.Fatal(err)
	}
	mits, err := o.Mitigations()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ReplayAll(recs, plan, mits)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].Streams) != len(recs[0].Streams) {
		t.Fatalf("got %d recordings, want 1 with %d streams", len(out), len(recs[0].Streams))
	}
	for i, s := range out[0].Streams {
		w := recs[0].Streams[i]
		if s.TTFT != w.TTFT || len(s.Gaps) != len(w.Gaps) {
			t.Fatalf("stream %d: TTFT %g with %d gaps, want %g with %d", i, s.TTFT, len(s.Gaps), w.TTFT, len(w.Gaps))
		}
		for j := range s.Gaps {
			if s.Gaps[j] != w.Gaps[j] {
				t.Errorf("stream %d gap %d: %g ns, want %g", i, j, s.Gaps[j], w.Gaps[j])
			}
		}
	}
}

// A pause at the start goes into each stream's first gap and nowhere else,
// and the columns of two mitigations are named by them.
func TestReplayPauseAtStart(t *testing.T) {
	recs := replayFixture(t)
	o := replayOpts()
	o.Pauses, o.PauseMS, o.PauseAt = 1, "300", PauseAtStart
	o.Smoothing = []string{"none", "33ms/500ms"}
	plan, err := o.PausePlan()
	if err != nil {
		t.Fatal(err)
	}
	mits, err := o.Mitigations()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ReplayAll(recs, plan, mits)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Name != "smoothing=none" || out[1].Name != "smoothing=33ms/500ms" {
		t.Fatalf("got %d recordings named %q, %q", len(out), out[0].Name, out[len(out)-1].Name)
	}
	checked := 0
	for i, s := range out[0].Streams {
		w := recs[0].Streams[i]
		for j := range s.Gaps {
			want := w.Gaps[j]
			if j == 0 {
				want += 300e6
			}
			if d := s.Gaps[j] - want; d > 1 || d < -1 {
				t.Errorf("stream %d gap %d: %g ns, want %g", i, j, s.Gaps[j], want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no gaps to check")
	}
	if note := out[0].Notes[len(out[0].Notes)-1]; !strings.Contains(note, "; 1 pauses injected (1 per stream of fixed:300 ms at start, seed 1)") {
		t.Errorf("note %q does not describe the pauses", note)
	}
}

func TestReplayOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(o *ReplayOptions)
		want string
	}{
		{func(o *ReplayOptions) { o.Pauses = 1001 }, "--pauses: must be in [0, 1000]"},
		{func(o *ReplayOptions) { o.PauseAt = "late" }, `--pause-at: must be start, middle, end or random, got "late"`},
		{func(o *ReplayOptions) { o.PauseMS = "x" }, "--pause-ms: "},
		{func(o *ReplayOptions) { o.Network = []string{"dialup"} }, `--network: "dialup": unknown profile`},
		{func(o *ReplayOptions) { o.Smoothing = []string{"fast"} }, `--smoothing: "fast": cadence: expected a duration`},
		{func(o *ReplayOptions) { o.Flush = nil }, `--flush: expected a value`},
		{func(o *ReplayOptions) { o.FrameMS = -1 }, "--frame-ms: must be in [0, 1000] ms"},
	} {
		o := replayOpts()
		c.edit(&o)
		_, err := o.PausePlan()
		if err == nil {
			_, err = o.Mitigations()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}
