package qoe

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stream returns chunk times (ns after the request) of n one-token chunks:
// the first at ttft ms, then one every gap ms, with hang ms added before
// each chunk index in hangs.
func stream(n int, ttft, gap, hang float64, hangs ...int) ([]float64, []int) {
	at := make([]float64, n)
	toks := make([]int, n)
	t := ttft
	for i := range n {
		if i > 0 {
			t += gap
		}
		for _, h := range hangs {
			if h == i {
				t += hang
			}
		}
		at[i], toks[i] = t*1e6, 1
	}
	return at, toks
}

var reader = Expectation{TTFT: 1e9, TokensPerS: 6}

// TestHangsFeelWorseThanSteady is the seed example: a steady 60 ms stream
// against a 25 ms stream with 1.5 s hangs. The second finishes sooner and
// feels worse: its delivery falls behind what the reader expects.
func TestHangsFeelWorseThanSteady(t *testing.T) {
	steadyAt, steadyTok := stream(200, 400, 60, 0)
	hangAt, hangTok := stream(200, 400, 25, 1500, 1, 3, 5)
	if last := hangAt[len(hangAt)-1]; last >= steadyAt[len(steadyAt)-1] {
		t.Fatalf("the hanging stream should finish sooner: %.0f ms against %.0f ms", last/1e6, steadyAt[len(steadyAt)-1]/1e6)
	}
	steady, _ := Score(reader, steadyAt, steadyTok)
	hang, _ := Score(reader, hangAt, hangTok)
	if steady.QoE != 1 || hang.QoE >= steady.QoE {
		t.Errorf("QoE: steady %.3f (want 1), hangs %.3f (want lower)", steady.QoE, hang.QoE)
	}
	t.Logf("QoE %.3f vs %.3f, fluidity %.3f vs %.3f, fluid rate %.1f/s vs %.1f/s",
		steady.QoE, hang.QoE, steady.Fluidity, hang.Fluidity, steady.FluidRate, hang.FluidRate)
	if steady.Fluidity != 1 || hang.Fluidity >= steady.Fluidity {
		t.Errorf("fluidity: steady %.3f, hangs %.3f; want the steady stream to meet every deadline and the other fewer", steady.Fluidity, hang.Fluidity)
	}
	if hang.FluidRate >= steady.FluidRate {
		t.Errorf("fluid token rate: steady %.1f/s, hangs %.1f/s; want the steady one higher", steady.FluidRate, hang.FluidRate)
	}
}

// TestAndesArea checks the QoE against areas worked by hand: nothing for
// 2 s then every token at once, against a curve of 1 token/s from 0 s.
func TestAndesArea(t *testing.T) {
	e := Expectation{TTFT: 0, TokensPerS: 1}
	// 4 tokens at t = 2 s: expected curve t (0..4 s), area 8; the lag is
	// t over [0, 2] (area 2); delivery is ahead afterwards.
	got := Andes(e, []float64{2e9}, []int{4})
	if want := 1 - 2.0/8; math.Abs(got-want) > 1e-12 {
		t.Errorf("Andes = %.6f, want %.6f", got, want)
	}
	// Delivered at 6 s: lag is the whole area up to 4 s (8) plus 4 × 2 s
	// on the flat, over an expected area of 8 + 4 × 2.
	got = Andes(e, []float64{6e9}, []int{4})
	if want := 1 - 16.0/16; math.Abs(got-want) > 1e-12 {
		t.Errorf("Andes late = %.6f, want %.6f", got, want)
	}
}

// TestFluidityDeadlines follows Etalon's algorithm by hand: deadlines of
// 100 ms after a 500 ms first deadline; slack carries over; a late token
// counts every deadline it missed.
func TestFluidityDeadlines(t *testing.T) {
	// First token at 300 ms (slack 200), then 100, 100 (met), then a 550 ms
	// gap: 550 > 100 + 200 slack, so ⌊(550 − 200 − 100)/100⌋ + 1 = 3 misses.
	at := []float64{300e6, 400e6, 500e6, 1050e6}
	got := Fluidity(500e6, 100e6, at, []int{1, 1, 1, 1})
	if want := 1 - 3.0/6; math.Abs(got-want) > 1e-12 {
		t.Errorf("fluidity = %.4f, want %.4f", got, want)
	}
}

func TestScoreRejectsEmpty(t *testing.T) {
	if _, ok := Score(reader, nil, nil); ok {
		t.Error("a stream without chunks has no score")
	}
	if _, ok := Score(Expectation{TTFT: 1e9}, []float64{1}, []int{1}); ok {
		t.Error("an expectation without a speed has no score")
	}
}

// randomStream is n one-token chunks from a random start, 5 to 45 ms
// apart, with a stall of up to 2 s one time in forty.
func randomStream(rng *rand.Rand, n int) (at []float64, tokens []int) {
	at, tokens = make([]float64, n), make([]int, n)
	tm := rng.Float64() * 5e8
	for k := range at {
		tm += 5e6 + rng.Float64()*4e7
		if rng.IntN(40) == 0 {
			tm += rng.Float64() * 2e9
		}
		at[k], tokens[k] = tm, 1
	}
	return at, tokens
}

// TestFluidityOnesIsFluidity: the one-token-chunk pass gives fluidity's
// result bit for bit, over random streams, rates and budgets.
func TestFluidityOnesIsFluidity(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 3000 {
		n := 1 + rng.IntN(300)
		at, ones := randomStream(rng, n)
		period := 1e9 / (1 + rng.Float64()*200)
		ttft := rng.Float64() * 1e9
		budget := math.Inf(1)
		if trial%2 == 0 {
			budget = float64(rng.IntN(n))
		}
		if got, want := fluidityOnes(ttft, period, at, budget), fluidity(ttft, period, at, ones, budget); got != want {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}

// TestFluidRateSkipsOnlyWhatItKnows: FluidRate, which answers a probe
// without a pass when no interval is longer than the period, gives the
// result of running every pass bit for bit, over random streams (one-token
// and larger chunks, late and early first tokens, stalls).
func TestFluidRateSkipsOnlyWhatItKnows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	skipped := 0
	for trial := range 4000 {
		at, tokens := randomStream(rng, 1+rng.IntN(300))
		for k := range tokens {
			if trial%3 == 0 && rng.IntN(8) == 0 {
				tokens[k] = 2 + rng.IntN(4)
			}
		}
		ttft := rng.Float64() * 1e9
		if got, want := FluidRate(ttft, at, tokens), fluidRate(ttft, at, tokens, false); got != want {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
		if at[0] <= ttft {
			skipped++
		}
	}
	if skipped < 1000 {
		t.Errorf("only %d streams had their first token by its deadline: the skip is hardly tested", skipped)
	}
}

// chatStreams are 64 streams of 256 one-token chunks shaped like a busy
// replica's: 11–13 ms steps, one in eight stretched to 30–60 ms by a
// prefill, the first token at 50–150 ms.
func chatStreams() (streams [][]float64, ones []int) {
	rng := rand.New(rand.NewPCG(19, 20))
	streams = make([][]float64, 64)
	for i := range streams {
		at := make([]float64, 256)
		tm := 5e7 + rng.Float64()*1e8
		for k := range at {
			at[k] = tm
			tm += 11e6 + rng.Float64()*2e6
			if rng.IntN(8) == 0 {
				tm += 2e7 + rng.Float64()*3e7
			}
		}
		streams[i] = at
	}
	ones = make([]int, 256)
	for k := range ones {
		ones[k] = 1
	}
	return streams, ones
}

// BenchmarkScore scores chatStreams against the run's default
// expectation (1 s, 6 tokens/s): Andes QoE, fluidity and the fluid token
// rate.
func BenchmarkScore(b *testing.B) {
	streams, ones := chatStreams()
	e := Expectation{TTFT: 1e9, TokensPerS: 6}
	var sum float64
	i := 0
	for b.Loop() {
		s, _ := Score(e, streams[i%len(streams)], ones)
		sum += s.QoE + s.Fluidity + s.FluidRate
		i++
	}
	if !(sum > 0) {
		b.Fatal("no scores")
	}
}

// BenchmarkFluidRate searches the fluid token rate of chatStreams with
// the run's default expected first-token time (1 s).
func BenchmarkFluidRate(b *testing.B) {
	streams, ones := chatStreams()
	var sum float64
	i := 0
	for b.Loop() {
		sum += FluidRate(1e9, streams[i%len(streams)], ones)
		i++
	}
	if !(sum > 0) {
		b.Fatal("no rate")
	}
}

// andesMinMax is Andes as first written, with min() and max(): the
// reference TestAndesComparesAsMinMax holds Andes to.
func andesMinMax(e Expectation, at []float64, tokens []int) float64 {
	n := 0.0
	for _, k := range tokens {
		n += float64(max(k, 1))
	}
	v := e.TokensPerS / 1e9
	t0 := e.TTFT
	tf := t0 + n/v
	end := max(tf, at[len(at)-1])
	lag := func(a, b, c float64) float64 {
		if c >= n || b <= a {
			return 0
		}
		a = max(a, t0+c/v)
		if b <= a {
			return 0
		}
		var area float64
		if r := min(b, tf); r > a {
			area += v/2*((r-t0)*(r-t0)-(a-t0)*(a-t0)) - c*(r-a)
		}
		if l := max(a, tf); b > l {
			area += (n - c) * (b - l)
		}
		return area
	}
	delay := lag(0, at[0], 0)
	cum := 0.0
	for k := range at {
		cum += float64(max(tokens[k], 1))
		next := end
		if k+1 < len(at) {
			next = at[k+1]
		}
		delay += lag(at[k], next, cum)
	}
	expected := n*n/(2*v) + n*(end-tf)
	if !(expected > 0) {
		return 1
	}
	return clamp01(1 - delay/expected)
}

// TestAndesComparesAsMinMax: Andes with comparisons for its minima and
// maxima gives min() and max()'s result bit for bit over random streams
// and expectations (early and late, slow and fast, zero first-token
// times).
func TestAndesComparesAsMinMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for trial := range 4000 {
		at, tokens := randomStream(rng, 1+rng.IntN(300))
		if trial%3 == 0 {
			tokens[rng.IntN(len(tokens))] = 2 + rng.IntN(4)
		}
		e := Expectation{TTFT: rng.Float64() * 2e9, TokensPerS: 0.5 + rng.Float64()*100}
		if trial%7 == 0 {
			e.TTFT = 0
		}
		if got, want := Andes(e, at, tokens), andesMinMax(e, at, tokens); got != want {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}
