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

// TestFluidityOnesIsFluidity: the one-token-chunk pass gives fluidity's
// result bit for bit, over random streams, rates and budgets.
func TestFluidityOnesIsFluidity(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 3000 {
		n := 1 + rng.IntN(300)
		at := make([]float64, n)
		ones := make([]int, n)
		tm := rng.Float64() * 5e8
		for k := range at {
			tm += 5e6 + rng.Float64()*4e7
			if rng.IntN(40) == 0 {
				tm += rng.Float64() * 2e9
			}
			at[k], ones[k] = tm, 1
		}
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

// fluidRateEveryPass is FluidRate as it was before it skipped the passes
// whose every deadline is met: each probe runs a pass.
func fluidRateEveryPass(ttft float64, at []float64, tokens []int) float64 {
	// A pass stops once it has missed more deadlines than the target
	// allows: met ≤ tokens, and the index is ≥ FluidTarget only while
	// missed ≤ met·(1 − FluidTarget)/FluidTarget.
	n := 0
	for _, k := range tokens {
		n += max(k, 1)
	}
	budget := float64(n) * (1 - FluidTarget) / FluidTarget
	ok := func(rate float64) bool { return fluidity(ttft, 1e9/rate, at, tokens, budget) >= FluidTarget }
	if n == len(tokens) { // every chunk one token: the common case, without the chunk-size terms
		ok = func(rate float64) bool { return fluidityOnes(ttft, 1e9/rate, at, budget) >= FluidTarget }
	}
	lo, hi := math.Log(0.01), math.Log(1e5)
	if m := len(at); m >= 2 {
		var maxGap float64
		toks := 0
		for k := 1; k < m; k++ {
			maxGap = max(maxGap, at[k]-at[k-1])
			toks += max(tokens[k], 1)
		}
		if maxGap > 0 {
			lo = max(lo, min(hi, math.Log(1e9/maxGap)))
		}
		if span := at[m-1] - at[0]; span > 0 {
			hi = min(hi, max(lo, math.Log(1.05*1e9*float64(toks)/span)))
		}
	}
	if !ok(math.Exp(lo)) {
		lo = math.Log(0.01)
		if !ok(math.Exp(lo)) {
			return 0
		}
	}
	if ok(math.Exp(hi)) {
		if hi = math.Log(1e5); ok(math.Exp(hi)) {
			return math.Exp(hi)
		}
	}
	for hi-lo > 0.05 {
		mid := (lo + hi) / 2
		if ok(math.Exp(mid)) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp(lo)
}

// TestFluidRateSkipsOnlyWhatItKnows: FluidRate, which answers a probe
// without a pass when no interval is longer than the period, gives the
// result of running every pass bit for bit, over random streams (one-token
// and larger chunks, late and early first tokens, stalls).
func TestFluidRateSkipsOnlyWhatItKnows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	skipped := 0
	for trial := range 4000 {
		n := 1 + rng.IntN(300)
		at := make([]float64, n)
		tokens := make([]int, n)
		tm := rng.Float64() * 5e8
		for k := range at {
			tm += 5e6 + rng.Float64()*4e7
			if rng.IntN(40) == 0 {
				tm += rng.Float64() * 2e9
			}
			at[k], tokens[k] = tm, 1
			if trial%3 == 0 && rng.IntN(8) == 0 {
				tokens[k] = 2 + rng.IntN(4)
			}
		}
		ttft := rng.Float64() * 1e9
		if got, want := FluidRate(ttft, at, tokens), fluidRateEveryPass(ttft, at, tokens); got != want {
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
