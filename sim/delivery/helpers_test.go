package delivery

import (
	"testing"
)

const ms = int64(1e6)

// steady returns n one-token server chunks every gap ns, the first at first.
func steady(first, gap int64, n int) []Chunk {
	out := make([]Chunk, n)
	for i := range out {
		out[i] = Chunk{At: first + int64(i)*gap, Tokens: 1}
	}
	return out
}

// pauseAfter delays every chunk after index i by d.
func pauseAfter(cs []Chunk, i int, d int64) []Chunk {
	for j := i + 1; j < len(cs); j++ {
		cs[j].At += d
	}
	return cs
}

func mustNew(t testing.TB, cfg Config) *Path {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func deliver(p *Path, req Request) Result {
	var st Stream
	var out Result
	p.Deliver(&st, req, &out)
	return out
}

func gaps(cs []Chunk) []int64 {
	var g []int64
	for i := 1; i < len(cs); i++ {
		g = append(g, cs[i].At-cs[i-1].At)
	}
	return g
}

func maxGap(cs []Chunk) int64 {
	var m int64
	for _, g := range gaps(cs) {
		m = max(m, g)
	}
	return m
}

// checkResult asserts the invariants every result keeps: client times
// strictly increase, tokens add up, every gap's parts are ≥ 0 and sum to
// the gap, and the TTFT parts sum to the client's TTFT.
func checkResult(t testing.TB, req Request, out *Result) {
	t.Helper()
	total := 0
	for _, c := range req.Chunks {
		total += max(c.Tokens, 1)
	}
	if req.CancelledAt != 0 { // the backup makes up the rest
		total = max(total, req.Output)
	}
	got := 0
	for i, c := range out.Client {
		if c.Tokens < 1 {
			t.Fatalf("client chunk %d has %d tokens", i, c.Tokens)
		}
		if i > 0 && c.At <= out.Client[i-1].At {
			t.Fatalf("client chunk %d at %d, not after %d", i, c.At, out.Client[i-1].At)
		}
		got += c.Tokens
	}
	if got != out.Tokens || (!out.Failed && got != total) || got > total {
		t.Fatalf("delivered %d tokens, Tokens %d, server %d, failed %v", got, out.Tokens, total, out.Failed)
	}
	if len(out.Client) == 0 {
		return
	}
	if len(out.Parts) != len(out.Client)-1 || len(out.ServerFirst) != len(out.Client) || len(out.ServerLast) != len(out.Client) {
		t.Fatalf("%d parts rows, %d/%d server indices for %d client chunks", len(out.Parts), len(out.ServerFirst), len(out.ServerLast), len(out.Client))
	}
	for k := range out.Client {
		f, l := out.ServerFirst[k], out.ServerLast[k]
		if (l >= 0 && f > l) || (f < 0 && l >= 0) {
			t.Fatalf("client chunk %d: server chunks %d..%d", k, f, l)
		}
		if k > 0 && f >= 0 && f != out.ServerLast[k-1] && f != out.ServerLast[k-1]+1 {
			t.Fatalf("client chunk %d starts at server chunk %d, the previous ended at %d: not consecutive tokens", k, f, out.ServerLast[k-1])
		}
		if k > 0 && f >= 0 {
			want := req.Chunks[f].At - req.Chunks[out.ServerLast[k-1]].At
			if s := out.Parts[k-1][CauseServer]; s > want {
				t.Fatalf("gap %d: server part %d beyond the server gap %d", k-1, s, want)
			}
		}
	}
	for k, row := range out.Parts {
		var sum int64
		for c, v := range row {
			if v < 0 {
				t.Fatalf("gap %d: %s part %d < 0 (%v)", k, Cause(c), v, row)
			}
			sum += v
		}
		if g := out.Client[k+1].At - out.Client[k].At; sum != g {
			t.Fatalf("gap %d: parts %v sum to %d, gap %d", k, row, sum, g)
		}
	}
	var sum int64
	for c, v := range out.TTFTParts {
		if v < 0 {
			t.Fatalf("TTFT %s part %d < 0", Cause(c), v)
		}
		sum += v
	}
	if ttft := out.Client[0].At - req.Arrival; sum != ttft {
		t.Fatalf("TTFT parts %v sum to %d, TTFT %d", out.TTFTParts, sum, ttft)
	}
}
