package delivery

import (
	"math"
	"slices"
	"testing"
)

// With every mechanism off the client sees the server's chunks, and every
// gap is the server's.
func TestOffIsIdentity(t *testing.T) {
	p := mustNew(t, DefaultConfig())
	if p.Enabled() {
		t.Fatal("the default configuration is on")
	}
	req := Request{Seed: 1, Arrival: 5 * ms, Chunks: []Chunk{{40 * ms, 1}, {60 * ms, 3}, {61 * ms, 1}, {400 * ms, 2}}}
	out := deliver(p, req)
	checkResult(t, req, &out)
	if !slices.Equal(out.Client, req.Chunks) {
		t.Fatalf("client %v, server %v", out.Client, req.Chunks)
	}
	for k, row := range out.Parts {
		if row[CauseServer] != out.Client[k+1].At-out.Client[k].At {
			t.Errorf("gap %d: %v is not all server", k, row)
		}
	}
	if out.TTFTParts[CauseServer] != 35*ms || !slices.Equal(out.ServerFirst, []int32{0, 1, 2, 3}) {
		t.Errorf("TTFT parts %v, server chunks %v", out.TTFTParts, out.ServerFirst)
	}
}

// Coalescing turns a steady 20 ms server cadence into fewer, larger chunks
// at the flush interval.
func TestCoalescingFlushInterval(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Coalescing = Coalescing{Mode: ModeBuffer, FlushMS: 100, EventBytes: 200, TokenBytes: 4}
	p := mustNew(t, cfg)
	req := Request{Seed: 3, Chunks: steady(50*ms, 20*ms, 100)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	if len(out.Client) != 20 {
		t.Fatalf("%d client chunks for 100 server chunks at 20 ms with a 100 ms flush, want 20", len(out.Client))
	}
	for k, c := range out.Client {
		if c.Tokens != 5 {
			t.Fatalf("client chunk %d: %d tokens, want 5", k, c.Tokens)
		}
	}
	// Every release comes 100 ms after the previous, but the last: the end
	// of the response flushes the buffer at the last token.
	g := gaps(out.Client)
	for k, v := range g[:len(g)-1] {
		if v != 100*ms {
			t.Fatalf("gap %d: %d ms, want 100", k, v/ms)
		}
	}
	if last := g[len(g)-1]; last != 80*ms {
		t.Errorf("last gap %d ms, want 80 (flushed by the end of the response)", last/ms)
	}
	// Of each 100 ms gap the server explains the 20 ms between the last token
	// seen and the next; the buffer holding that next token 100 ms instead
	// of the previous one's 20 ms is network time.
	for k, row := range out.Parts[:len(out.Parts)-1] {
		if row[CauseServer] != 20*ms || row[CauseNetwork] != 80*ms {
			t.Fatalf("gap %d parts %v, want 20 ms server and 80 ms network", k, row)
		}
	}
	if out.Client[0].At != 150*ms || out.TTFTParts[CauseServer] != 50*ms || out.TTFTParts[CauseNetwork] != 100*ms {
		t.Errorf("first chunk at %d ms, TTFT parts %v", out.Client[0].At/ms, out.TTFTParts)
	}
}

// The proxy-buffer preset releases a 4 KiB buffer: 20 events of 204 bytes.
func TestProxyBufferPreset(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Coalescing.Preset = "proxy-buffer"
	p := mustNew(t, cfg)
	req := Request{Seed: 3, Chunks: steady(0, 20*ms, 105)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	var sizes []int
	for _, c := range out.Client {
		sizes = append(sizes, c.Tokens)
	}
	if want := []int{21, 21, 21, 21, 21}; !slices.Equal(sizes, want) {
		t.Errorf("chunk sizes %v, want %v (4096 B / 204 B per event, the 21st fills it)", sizes, want)
	}
}

// Nagle: one segment in flight; the next waits for its ACK, a round trip
// (2 × 10 ms) plus the 40 ms delayed ACK after it was sent.
func TestNagle(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Coalescing.Preset = "nagle"
	cfg.Network.BaseMS = 10
	p := mustNew(t, cfg)
	req := Request{Seed: 3, Chunks: steady(0, 20*ms, 31)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	// Sent at 0 ms (nothing in flight), then at each ACK 60 ms apart with
	// what was generated before it (a token generated at the ACK's instant
	// waits for the next), the last with its ACK after the end.
	var sizes []int
	for _, c := range out.Client {
		sizes = append(sizes, c.Tokens)
	}
	if want := []int{1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1}; !slices.Equal(sizes, want) {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
	for k, g := range gaps(out.Client) {
		if g != 60*ms {
			t.Fatalf("gap %d: %d ms, want 60", k, g/ms)
		}
	}
}

// Accept-then-flush: the first chunk at once, then one flush per window.
func TestFlushWindow(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Flush.WindowMS = 50
	p := mustNew(t, cfg)
	req := Request{Seed: 1, Chunks: steady(30*ms, 20*ms, 51)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	if out.Client[0] != (Chunk{30 * ms, 1}) {
		t.Fatalf("first chunk %v, want it unheld at 30 ms", out.Client[0])
	}
	for k, g := range gaps(out.Client) {
		if g != 50*ms {
			t.Fatalf("gap %d: %d ms, want 50", k, g/ms)
		}
	}
	// Each gap: the server's 20 ms between the last token seen and the
	// next, which the flush then held 30 ms longer than the last one.
	for k, row := range out.Parts {
		if row[CauseServer] != 20*ms || row[CauseSmoothingDelay] != 30*ms {
			t.Fatalf("gap %d parts %v, want 20 ms server and 30 ms smoothing-delay", k, row)
		}
	}
}

// Frames: every client time is on the stream's frame grid, and releases
// within one frame merge.
func TestFrames(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Render.FrameMS = 16.7
	p := mustNew(t, cfg)
	req := Request{Seed: 9, Chunks: steady(0, 5*ms, 60)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	f := int64(16_700_000)
	phase := out.Client[0].At % f
	for _, c := range out.Client {
		if (c.At-phase)%f != 0 {
			t.Fatalf("chunk at %d not on the grid %d + k·%d", c.At, phase, f)
		}
	}
	if n := len(out.Client); n < 17 || n > 19 {
		t.Errorf("%d client chunks for 295 ms of 5 ms chunks at 16.7 ms frames", n)
	}
}

// A smoothing buffer of depth D removes every server-side gap shorter than
// D from the client view, and leaves a longer one visible by about its
// excess over D.
func TestSmoothingHidesGapsShorterThanDepth(t *testing.T) {
	const depth = 500
	cfg := DefaultConfig()
	cfg.Smoothing = Smoothing{CadenceMS: 33, DepthMS: depth}
	p := mustNew(t, cfg)
	pauses := []int64{50, 100, 200, 300, 400, 450}
	cs := steady(0, 20*ms, 1000)
	for i, d := range pauses {
		pauseAfter(cs, 150*(i+1), d*ms)
	}
	req := Request{Seed: 1, Chunks: cs}
	out := deliver(p, req)
	checkResult(t, req, &out)
	if g := maxGap(out.Client); g > 33*ms {
		t.Errorf("largest client gap %.1f ms with server pauses up to 450 ms and depth %d ms; want ≤ one 33 ms cadence", float64(g)/1e6, depth)
	}
	if out.StartupDelay != depth*ms {
		t.Errorf("start-up delay %d ms, want %d", out.StartupDelay/ms, depth)
	}
	// The delay each token spends in the buffer stays bounded.
	if lag := out.Client[len(out.Client)-1].At - cs[len(cs)-1].At; lag > depth*ms {
		t.Errorf("the last token shows %d ms after the server sent it", lag/ms)
	}

	// A pause longer than the depth shows.
	long := pauseAfter(steady(0, 20*ms, 300), 150, 1200*ms)
	req = Request{Seed: 1, Chunks: long}
	out = deliver(p, req)
	checkResult(t, req, &out)
	// The buffer holds about depth ms of tokens and drains at no less than
	// (1 − 1/horizonFactor) of their rate, so it lasts at most
	// depth·h/(h−1) ms into the pause.
	lo := 1200*ms - depth*ms*horizonFactor/(horizonFactor-1)
	if g := maxGap(out.Client); g < lo || g > 1200*ms {
		t.Errorf("largest client gap %d ms for a 1200 ms pause at depth %d ms; want between %d and 1200", g/ms, depth, lo/ms)
	}
	// That gap is mostly the server's; the buffer's part is what it hid.
	k := slices.Index(gaps(out.Client), maxGap(out.Client))
	if row := out.Parts[k]; row[CauseServer] < row[CauseSmoothingDelay] {
		t.Errorf("long gap parts %v: expected mostly server", row)
	}
}

// The buffer follows a change of rate: it neither starves (gaps stay near
// the faster of the cadence and the token interval) nor grows (the delay
// stays near the depth).
func TestSmoothingAdaptsToRate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Smoothing = Smoothing{CadenceMS: 33, DepthMS: 300}
	p := mustNew(t, cfg)
	fast := steady(0, 10*ms, 500)
	slow := steady(fast[len(fast)-1].At+50*ms, 50*ms, 200)
	req := Request{Seed: 1, Chunks: append(fast, slow...)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	var tau int
	var worst int64
	for _, c := range out.Client {
		tau += c.Tokens
		worst = max(worst, c.At-req.Chunks[tau-1].At)
	}
	if worst > 900*ms {
		t.Errorf("a token waited %d ms in a 300 ms buffer", worst/ms)
	}
	if g := maxGap(out.Client); g > 100*ms {
		t.Errorf("largest client gap %d ms after the rate fell to one token per 50 ms", g/ms)
	}
}

// A 2 % loss per chunk with a 200 ms RTO gives gaps ≥ 200 ms in the
// expected share of streams. A lost chunk i arrives one RTO late (more on
// repeated losses) and shows as a gap of at least the RTO unless an earlier
// loss still holds the stream back; lossShare computes that share exactly,
// which is close to 1 − (1 − p)^(n−1), the share losing one of chunks 2..n.
func TestLossShare(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.Loss = 0.02
	cfg.Network.RTOMS = 200
	p := mustNew(t, cfg)
	const streams, chunks = 4000, 30
	var st Stream
	var out Result
	hit := 0
	for s := range streams {
		req := Request{Seed: uint64(s), Chunks: steady(0, 20*ms, chunks)}
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		long := false
		for k, g := range gaps(out.Client) {
			if g >= 200*ms {
				long = true
				if out.Parts[k][CausePacketLoss] < 180*ms {
					t.Fatalf("stream %d gap %d of %d ms: loss part %d ms", s, k, g/ms, out.Parts[k][CausePacketLoss]/ms)
				}
			}
		}
		if long {
			hit++
		}
	}
	q := lossShare(0.02, chunks, 10)
	sd := math.Sqrt(streams * q * (1 - q))
	if d := math.Abs(float64(hit) - streams*q); d > 4*sd {
		t.Errorf("%d of %d streams with a gap ≥ 200 ms, expected %.1f ± %.1f (4σ)", hit, streams, streams*q, 4*sd)
	}
	t.Logf("%d of %d streams hit: expected %.1f (σ %.1f); 1 − 0.98^29 would give %.1f", hit, streams, streams*q, sd,
		streams*(1-math.Pow(0.98, chunks-1)))
}

// lossShare is the probability that a stream of n chunks one interval apart,
// each transmission lost with probability p and retried after rto
// intervals (doubling), shows a gap of at least rto intervals. The state is
// the backlog B: how many intervals the latest arrival lies behind the
// current chunk's send time; chunk i with delay D arrives with gap
// D − (B − 1) when positive, and B becomes max(B − 1, D).
func lossShare(p float64, n, rto int) float64 {
	type delay struct {
		d    int
		prob float64
	}
	delays := []delay{{0, 1 - p}}
	d, r, pr := 0, rto, p
	for range maxAttempts {
		d += r
		delays = append(delays, delay{d, pr * (1 - p)})
		r, pr = min(2*r, int(rtoMaxNS/(20*ms))), pr*p
	}
	delays[len(delays)-1].prob += pr // the last try gets through
	size := d + 1
	clear := make([]float64, size) // P(backlog = b and no long gap yet)
	for _, x := range delays {     // the first chunk: its delay is TTFT, not a gap
		clear[x.d] += x.prob
	}
	for range n - 1 {
		next := make([]float64, size)
		for b, pb := range clear {
			if pb == 0 {
				continue
			}
			for _, x := range delays {
				if x.d > 0 && x.d-(b-1) >= rto {
					continue // a long gap: the stream is hit
				}
				next[max(b-1, x.d)] += pb * x.prob
			}
		}
		clear = next
	}
	var ok float64
	for _, v := range clear {
		ok += v
	}
	return 1 - ok
}

// A chunk lost twice waits 200 + 400 ms, and holds back the chunks behind it.
func TestLossBackoffAndHeadOfLine(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.Loss = 0.5
	p := mustNew(t, cfg)
	var st Stream
	var out Result
	for s := range uint64(200) {
		req := Request{Seed: s, Chunks: steady(0, 20*ms, 20)}
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		for k, row := range out.Parts {
			// Every retransmission wait is a sum of 200·2^i ms timeouts, less
			// the 20 ms server intervals it overlaps.
			if l := row[CausePacketLoss]; l > 0 && row[CauseNetwork] != 0 {
				t.Fatalf("seed %d gap %d: network part %d with no latency configured", s, k, row[CauseNetwork])
			}
		}
		for k, g := range gaps(out.Client) {
			if g >= 600*ms && out.Losses < 2 {
				t.Fatalf("seed %d gap %d of %d ms with %d losses", s, k, g/ms, out.Losses)
			}
		}
	}
}

// A connection drop holds the stream until the reconnect, then resumes; with
// on_drop fail the stream ends at the drop with what arrived.
func TestConnectionDrops(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.DropsPerS = 0.5
	cfg.Network.ReconnectMS = MustParseDist("fixed:700")
	p := mustNew(t, cfg)
	var st Stream
	var out Result
	drops, failed := 0, 0
	for s := range uint64(100) {
		req := Request{Seed: s, Chunks: steady(0, 20*ms, 100)}
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		drops += out.Reconnects
		for k, row := range out.Parts {
			if row[CauseConnection] > 700*ms {
				t.Fatalf("seed %d gap %d: connection part %d ms > the 700 ms reconnect", s, k, row[CauseConnection]/ms)
			}
		}
	}
	if drops < 50 || drops > 200 {
		t.Errorf("%d drops over 100 streams of ~2 s at 0.5/s", drops)
	}
	cfg.Network.OnDrop = OnDropFail
	p = mustNew(t, cfg)
	for s := range uint64(100) {
		req := Request{Seed: s, Chunks: steady(0, 20*ms, 100)}
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		if out.Failed {
			failed++
			if n := len(out.Client); n > 0 && out.Client[n-1].At > out.FailedAt {
				t.Fatalf("seed %d: a chunk at %d after the failure at %d", s, out.Client[n-1].At, out.FailedAt)
			}
			if out.Tokens >= 100 {
				t.Fatalf("seed %d: failed with every token delivered", s)
			}
		}
	}
	if failed < 40 || failed > 90 {
		t.Errorf("%d of 100 streams failed at 0.5 drops/s over ~2 s (expected about 63)", failed)
	}
}

// Failover caps the largest client gap near the watchdog threshold plus
// the backup's TTFT, and the stream is finished by the backup.
func TestFailoverCapsGap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failover.WatchdogMS = 1500
	cfg.Failover.PrimaryModel = "llama-3.1-70b"
	p := mustNew(t, cfg)
	const prompt, before = 2000, 50
	cs := pauseAfter(steady(100*ms, 20*ms, 200), before-1, 10_000*ms) // a 10 s stall after 50 tokens
	req := Request{Seed: 1, Arrival: 0, PromptTokens: prompt, Chunks: cs}
	out := deliver(p, req)
	checkResult(t, req, &out)
	ttft := p.BackupTTFT(prompt + before)
	limit := 1500*ms + ttft
	g := maxGap(out.Client)
	if g < 1500*ms || g > limit {
		t.Errorf("largest client gap %.1f ms; want between the 1500 ms watchdog and watchdog + backup TTFT %.1f ms", float64(g)/1e6, float64(limit)/1e6)
	}
	if out.Failovers != 1 || !out.CoherenceBreak || out.FailoverSaved <= 0 || out.Tokens != 200 {
		t.Errorf("failovers %d, coherence break %v, saved %d ms, tokens %d", out.Failovers, out.CoherenceBreak, out.FailoverSaved/ms, out.Tokens)
	}
	k := slices.Index(gaps(out.Client), g)
	row := out.Parts[k]
	if row[CauseServer] != 1500*ms || row[CauseFailover] != ttft {
		t.Errorf("failover gap parts %v; want server 1500 ms and failover %d", row, ttft)
	}
	if out.ServerLast[k] != before-1 || out.ServerFirst[k+1] != -1 || out.FailoverBefore != before {
		t.Errorf("server chunks around the failover: last %d, next %d, failover before %d", out.ServerLast[k], out.ServerFirst[k+1], out.FailoverBefore)
	}
	t.Logf("backup TTFT for %d context tokens: %.1f ms; step %.2f ms; saved %.0f ms", prompt+before,
		float64(ttft)/1e6, float64(p.BackupStepNS(prompt+before))/1e6, float64(out.FailoverSaved)/1e6)

	// Same model: no coherence break. Before the first token: none either.
	cfg.Failover.PrimaryModel = "llama-3.1-8b"
	out = deliver(mustNew(t, cfg), req)
	if out.CoherenceBreak {
		t.Error("a failover to the same model broke coherence")
	}
	cfg.Failover.PrimaryModel = "other"
	late := Request{Seed: 1, PromptTokens: prompt, Chunks: steady(5000*ms, 20*ms, 10)}
	out = deliver(mustNew(t, cfg), late)
	checkResult(t, late, &out)
	if out.Failovers != 1 || out.CoherenceBreak || out.TTFTParts[CauseServer] != 1500*ms || out.FailoverAt != 1500*ms {
		t.Errorf("failover before the first token: %d failovers, break %v, TTFT parts %v", out.Failovers, out.CoherenceBreak, out.TTFTParts)
	}
}

// A stream the server cancelled when the watchdog fired (the simulator
// aborting the primary) reaches the client exactly as one whose server ran
// on and stalled past the watchdog: same chunks, same split by cause, same
// failover time. Only the saving is unknown (0): the primary never
// finished. Before the first token too.
func TestCancelledPrimaryMatchesWatchdog(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.Profile = "broadband"
	cfg.Failover.WatchdogMS = 1500
	p := mustNew(t, cfg)
	const before = 50
	cs := pauseAfter(steady(100*ms, 20*ms, 200), before-1, 10_000*ms)
	for _, c := range []struct {
		name      string
		kept, cut Request
	}{
		{"mid-stream",
			Request{Seed: 7, PromptTokens: 2000, Chunks: cs},
			Request{Seed: 7, PromptTokens: 2000, Chunks: cs[:before], CancelledAt: cs[before-1].At + 1500*ms, Output: 200}},
		{"before the first token",
			Request{Seed: 7, PromptTokens: 2000, Chunks: steady(5000*ms, 20*ms, 10)},
			Request{Seed: 7, PromptTokens: 2000, CancelledAt: 1500 * ms, Output: 10}},
	} {
		kept, cut := deliver(p, c.kept), deliver(p, c.cut)
		checkResult(t, c.cut, &cut)
		if kept.Failovers != 1 || cut.Failovers != 1 || kept.FailoverAt != cut.FailoverAt || kept.FailoverBefore != cut.FailoverBefore {
			t.Fatalf("%s: failovers %d/%d at %d/%d before chunk %d/%d", c.name, kept.Failovers, cut.Failovers,
				kept.FailoverAt, cut.FailoverAt, kept.FailoverBefore, cut.FailoverBefore)
		}
		if !slices.Equal(kept.Client, cut.Client) || !slices.Equal(kept.Parts, cut.Parts) || kept.TTFTParts != cut.TTFTParts {
			t.Errorf("%s: the cancelled stream reached the client differently", c.name)
		}
		if cut.FailoverSaved != 0 || (c.kept.Chunks[0].At > 0 && kept.FailoverSaved == 0) {
			t.Errorf("%s: saved %d ms cancelled, %d ms kept", c.name, cut.FailoverSaved/ms, kept.FailoverSaved/ms)
		}
	}
}

// Jitter never reorders: a late chunk holds back the next one, and the wait
// is network time.
func TestJitterKeepsOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.BaseMS = 20
	cfg.Network.JitterMS = MustParseDist("pareto:1,1.1,3000")
	p := mustNew(t, cfg)
	var st Stream
	var out Result
	for s := range uint64(200) {
		req := Request{Seed: s, Chunks: steady(0, 5*ms, 200)}
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		for _, row := range out.Parts {
			if row[CausePacketLoss]+row[CauseConnection]+row[CauseSmoothingDelay]+row[CauseFailover] != 0 {
				t.Fatalf("seed %d: parts %v with only jitter on", s, row)
			}
		}
	}
}

// Same seed, same result; another seed, other draws; a fresh or a reused
// Stream gives the same result.
func TestDeterminism(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.Profile = "flaky-wifi"
	cfg.Render.FrameMS = 16.7
	cfg.Smoothing.CadenceMS = 33
	p := mustNew(t, cfg)
	req := Request{Seed: 42, Chunks: steady(0, 15*ms, 400)}
	var st Stream
	var a, b Result
	p.Deliver(&st, Request{Seed: 7, Chunks: steady(0, 3*ms, 900)}, &a) // dirty the scratch
	p.Deliver(&st, req, &a)
	b = deliver(p, req)
	if !slices.Equal(a.Client, b.Client) || !slices.Equal(a.Parts, b.Parts) || a.Losses != b.Losses {
		t.Fatal("the same request gave different results")
	}
	req.Seed = 43
	c := deliver(p, req)
	if slices.Equal(a.Client, c.Client) {
		t.Error("another seed gave the same client stream")
	}
}

// Drops faster than a chunk's trip end: the stream fails after
// maxDropsPerChunk connections in a row drop before one chunk gets through,
// instead of resuming forever; and a lossy link with frequent drops still
// finishes: each new connection draws the resent chunk's delay and losses
// afresh, so one unlucky draw does not doom every retry.
func TestDropsCannotStallForever(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Network.BaseMS = 60000 // a one-minute trip against ten drops a second
	cfg.Network.DropsPerS = 10
	p := mustNew(t, cfg)
	req := Request{Seed: 3, Chunks: steady(100*ms, 20*ms, 50)}
	out := deliver(p, req)
	checkResult(t, req, &out)
	if !out.Failed || out.Reconnects != maxDropsPerChunk+1 || len(out.Client) != 0 {
		t.Errorf("failed %v after %d reconnects with %d chunks delivered; want a failure after %d", out.Failed, out.Reconnects, len(out.Client), maxDropsPerChunk+1)
	}

	cfg = DefaultConfig()
	cfg.Network.Profile = "flaky-wifi"
	cfg.Network.Loss, cfg.Network.DropsPerS = 0.5, 10
	p = mustNew(t, cfg)
	req = Request{Seed: 4, Chunks: steady(100*ms, 20*ms, 200)}
	out = deliver(p, req)
	checkResult(t, req, &out)
	if out.Reconnects == 0 || out.Losses == 0 {
		t.Errorf("%d reconnects, %d losses: the case exercises neither", out.Reconnects, out.Losses)
	}
	if last := out.Client[len(out.Client)-1].At; out.Failed || last > 3600*1000*ms {
		t.Errorf("failed %v; the stream took %.0f s", out.Failed, float64(last)/1e9)
	}
	t.Logf("loss 0.5, 10 drops/s: %d reconnects, %d losses, failed %v", out.Reconnects, out.Losses, out.Failed)
}
