package delivery

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomConfig turns on a random subset of mechanisms with random values.
func randomConfig(r *rand.Rand) Config {
	cfg := DefaultConfig()
	if r.IntN(2) == 0 {
		names := ProfileNames()
		cfg.Network.Profile = names[r.IntN(len(names))]
	}
	if r.IntN(2) == 0 {
		cfg.Network.BaseMS = r.Float64() * 50
		cfg.Network.JitterMS = MustParseDist([]string{"exp:3", "uniform:0,40", "pareto:1,1.3,900", "lognormal:5,9"}[r.IntN(4)])
	}
	if r.IntN(3) == 0 {
		cfg.Network.Loss = r.Float64() * 0.2
		cfg.Network.RTOMS = 50 + r.Float64()*300
	}
	if r.IntN(3) == 0 {
		cfg.Network.DropsPerS = r.Float64() * 2
		cfg.Network.ReconnectMS = MustParseDist("uniform:0,900")
		if r.IntN(3) == 0 {
			cfg.Network.OnDrop = OnDropFail
		}
	}
	switch r.IntN(4) {
	case 0:
		cfg.Coalescing.Preset = "nagle"
	case 1:
		cfg.Coalescing.Preset = "proxy-buffer"
	case 2:
		cfg.Coalescing.Mode = ModeBuffer
		cfg.Coalescing.FlushMS = r.Float64() * 200
		cfg.Coalescing.SizeTokens = r.IntN(10)
	}
	if r.IntN(2) == 0 {
		cfg.Render.FrameMS = []float64{8.3, 16.7, 33.3}[r.IntN(3)]
	}
	if r.IntN(3) == 0 {
		cfg.Flush.WindowMS = 10 + r.Float64()*100
	}
	if r.IntN(2) == 0 {
		cfg.Smoothing = Smoothing{CadenceMS: 5 + r.Float64()*60, DepthMS: 20 + r.Float64()*800, InitialMS: r.Float64() * 300, InitialTokens: r.IntN(20)}
	}
	if r.IntN(3) == 0 {
		cfg.Failover.WatchdogMS = 100 + r.Float64()*1500
		cfg.Failover.Backup.Batch = r.IntN(128)
		cfg.Failover.PrimaryModel = []string{"", "llama-3.1-8b", "llama-3.1-70b"}[r.IntN(3)]
	}
	return cfg
}

// randomRequest is a timeline with random gaps (some zero, some stalls) and
// chunk sizes (as speculative decoding makes them).
func randomRequest(r *rand.Rand) Request {
	n := 1 + r.IntN(300)
	arrival := int64(r.IntN(1000)) * ms
	t := arrival + int64(r.ExpFloat64()*200*float64(ms))
	cs := make([]Chunk, n)
	for i := range cs {
		cs[i] = Chunk{At: t, Tokens: 1 + r.IntN(3)*r.IntN(2)}
		switch r.IntN(20) {
		case 0:
			t += int64(r.Float64() * 3e9) // a stall
		case 1:
			// a zero gap
		default:
			t += int64(r.ExpFloat64() * 25 * float64(ms))
		}
	}
	return Request{Seed: r.Uint64(), Arrival: arrival, PromptTokens: r.IntN(8000), Chunks: cs}
}

// Over random timelines and configurations every gap's parts are ≥ 0 and sum
// exactly to the gap, the TTFT's to the TTFT; tokens are conserved; client
// times increase; and a reused Stream gives what a fresh one gives.
func TestPropertyPartsSumToGap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var st Stream
	var out, fresh Result
	for i := range 1500 {
		cfg := randomConfig(r)
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		req := randomRequest(r)
		p.Deliver(&st, req, &out)
		checkResult(t, req, &out)
		var st2 Stream
		p.Deliver(&st2, req, &fresh)
		if len(out.Client) != len(fresh.Client) || out.Losses != fresh.Losses || out.Reconnects != fresh.Reconnects {
			t.Fatalf("case %d: a reused Stream gave another result", i)
		}
		for k := range out.Client {
			if out.Client[k] != fresh.Client[k] {
				t.Fatalf("case %d: chunk %d differs with a fresh Stream", i, k)
			}
		}
	}
}

// Splitting only the gaps longer than PartsOver changes nothing else: the
// split rows equal the full attribution's, the others are zero, and the
// chunks, server indexes and TTFT split are the same.
func TestPropertyPartsOver(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var st Stream
	var full, some Result
	split, zeroed := 0, 0
	for i := range 1500 {
		p, err := New(randomConfig(r))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		req := randomRequest(r)
		p.Deliver(&st, req, &full)
		req.PartsOver = []int64{1, 20 * ms, 200 * ms, math.MaxInt64}[r.IntN(4)]
		p.Deliver(&st, req, &some)
		if !slices.Equal(full.Client, some.Client) || !slices.Equal(full.ServerFirst, some.ServerFirst) ||
			!slices.Equal(full.ServerLast, some.ServerLast) || full.TTFTParts != some.TTFTParts {
			t.Fatalf("case %d: PartsOver %d changed the chunks or the server indexes", i, req.PartsOver)
		}
		for k := range full.Parts {
			want := full.Parts[k]
			if full.Client[k+1].At-full.Client[k].At <= req.PartsOver {
				want = [NumCauses]int64{}
				zeroed++
			} else {
				split++
			}
			if some.Parts[k] != want {
				t.Fatalf("case %d, PartsOver %d: gap %d split %v, want %v", i, req.PartsOver, k, some.Parts[k], want)
			}
		}
	}
	if split == 0 || zeroed == 0 {
		t.Errorf("%d gaps split and %d skipped: the cases do not exercise both", split, zeroed)
	}
}

// The split of one gap, by hand: a 100 ms server interval whose smoothing
// delay shrank by 40 ms while the network delay grew by 10 ms leaves a
// 70 ms gap; the 40 ms come off the positive parts in proportion.
func TestSettle(t *testing.T) {
	row := [NumCauses]int64{100, 10, 0, 0, -40, 0}
	settle(&row, 70)
	if row != [NumCauses]int64{64, 6, 0, 0, 0, 0} {
		t.Errorf("settled %v, want [64 6 0 0 0 0] (100·70/110 = 63.6, 10·70/110 = 6.4)", row)
	}
	big := [NumCauses]int64{1 << 61, 3, 0, 0, -(1 << 60), 0}
	settle(&big, 1<<60+3)
	if big[0]+big[1] != 1<<60+3 || big[4] != 0 {
		t.Errorf("large values: %v", big)
	}
}
