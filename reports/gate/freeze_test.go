package gate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

// TestFisherExact: the one-sided p-values against exact rational sums of
// the hypergeometric (Python's fractions over math.comb), up to 5,000
// streams a side.
func TestFisherExact(t *testing.T) {
	cases := []struct {
		kb, nb, kc, nc int
		up, down       float64
	}{
		{1, 10, 7, 10, 0.009883305548940223, 0.9996427720885925},
		{6, 600, 27, 600, 0.0001348066982050348, 0.9999734465221618},
		{0, 10, 5, 10, 0.016253869969040248, 1},
		{30, 2000, 45, 2000, 0.051038561114826415, 0.9692641936718066},
		{40, 5000, 70, 5000, 0.002598275473738126, 0.998604573496025},
		{10, 600, 3, 600, 0.9891167469249114, 0.0452694307328686},
		{300, 3000, 250, 3000, 0.988783180976724, 0.01414264035204865}, // below the mean: summed as 1 − the lower tail
		{250, 3000, 300, 3000, 0.01414264035204865, 0.988783180976724},
	}
	for _, c := range cases {
		up, down := fisherUpper(c.kb, c.nb, c.kc, c.nc), fisherLower(c.kb, c.nb, c.kc, c.nc)
		if math.Abs(up-c.up) > 1e-9*max(c.up, 1e-300) || math.Abs(down-c.down) > 1e-9 {
			t.Errorf("%d/%d against %d/%d: got p %.12g (lower %.12g), want %.12g (%.12g)", c.kc, c.nc, c.kb, c.nb, up, down, c.up, c.down)
		}
	}
}

// TestBinomUpper: both ways of summing the binomial tail, against exact sums.
func TestBinomUpper(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		k    int
		want float64
	}{{600, 0.05, 20, 0.9805466737715841}, {600, 0.05, 45, 0.0051070471481677255}, {10, 0, 0, 1}, {10, 0, 1, 0}, {10, 1, 10, 1}} {
		if got := binomUpper(c.n, c.p, c.k); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("P(Bin(%d, %g) ≥ %d): got %.12g, want %.12g", c.n, c.p, c.k, got, c.want)
		}
	}
}

// TestFreezeMDE: the exact power falls with fewer streams; at 10 streams
// a side not even a quarter of them freezing is detected at 80 %, and the
// MDE is where the power crosses 80 % (checked by simulation of the test).
func TestFreezeMDE(t *testing.T) {
	small, large := freezeMDE(0, 10, 10, 0.025, 0.05), freezeMDE(0.01, 600, 600, 0.025, 0.05)
	if !(small > PowerEffect) || !(large > 0.005 && large < 0.03) {
		t.Fatalf("MDE at 10 streams %v (want > %v), at 600 with 1 %% frozen %v (want 0.5–3 points)", small, PowerEffect, large)
	}
	// Monte Carlo power of the test at p0 + MDE: about 80 %.
	rng := rand.New(rand.NewPCG(3, 4))
	binom := func(n int, p float64) int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	hits := 0
	const trials = 2000
	for range trials {
		if freezeFails(binom(600, 0.01), 600, binom(600, 0.01+large), 600, 0.025, 0.05) {
			hits++
		}
	}
	if p := float64(hits) / trials; math.Abs(p-Power) > 0.04 {
		t.Errorf("simulated power at the MDE (+%.2f pts): %.3f, want %.2f ± 0.04", large*100, p, Power)
	}
}

// streams600 builds n finished streams arriving 100 ms apart, each of
// 200 gaps of 20–24 ms and one hiccup of 20–251.2 ms (0.5 % of streams
// pass the 250 ms stall threshold of their own, as in the default scenario few do); when frozen, every 29th
// stream (3.5 % of 600) also has one gap of 2.5 s.
func streams600(name string, n int, seed uint64, frozen bool) Sample {
	rng := rand.New(rand.NewPCG(seed, 26))
	r := &sim.Result{Name: name, Measured: &sim.Measured{}}
	for i := range r.Position {
		r.Position[i] = quantile.NewHistogram(6)
	}
	gaps := make([]float64, 200)
	for i := range n {
		for j := range gaps {
			gaps[j] = (20 + 4*rng.Float64()) * 1e6
		}
		gaps[rng.IntN(len(gaps))] = (20 + 231.2*rng.Float64()) * 1e6
		if frozen && i%29 == 0 {
			gaps[rng.IntN(len(gaps))] = 2500e6
		}
		var sum float64
		for _, g := range gaps {
			sum += g
		}
		sorted := slices.Sorted(slices.Values(gaps))
		q := func(p float64) float64 { return rank(sorted, p) }
		ttft := 100e6 + rng.Float64()*10e6
		st := sim.StreamSummary{ID: i, Arrival: sim.Time(i) * 100 * sim.Millisecond, OutputTokens: len(gaps) + 1, Chunks: len(gaps) + 1,
			TTFT: sim.Time(ttft), E2EL: sim.Time(ttft + sum), GapMax: sim.Time(sorted[len(sorted)-1]), GapMean: sum / float64(len(gaps)),
			GapP50: q(0.5), GapP90: q(0.9), GapP99: q(0.99)}
		r.Streams.Append(st)
		r.Measured.Streams = append(r.Measured.Streams, sim.MeasuredStream{TTFT: ttft, E2EL: ttft + sum, GapMax: sorted[len(sorted)-1]})
		r.Requests++
		r.Finished++
	}
	r.Duration = sim.Time(n) * 100 * sim.Millisecond
	return Sample{Name: name, Result: r, Metrics: sim.DefaultConfig().Metrics}
}

// TestDefaultGateCatchesAFrozenShare: a candidate of 600 streams in which
// 3.5 % froze for 2.5 s fails the default gate on frozen_stream_share by
// Fisher's test, while 20 pairs of the same configuration on different
// seeds pass — every default metric conclusive (MDE within 25 %) — and 10
// streams a side are inconclusive.
func TestDefaultGateCatchesAFrozenShare(t *testing.T) {
	o := DefaultOptions()
	base := streams600("base", 600, 1, false)
	rep, err := Compare(base, streams600("frozen", 600, 2, true), o)
	if err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Metric == FrozenMetric })]
	if rep.Verdict != Fail || row.Verdict != Fail || row.Test != "fisher" || row.PValue == nil || !(*row.PValue < 0.025) || row.N != 1200 {
		t.Fatalf("frozen candidate: gate %s, %s %s (test %s, p %v, n %d), want FAIL by fisher at p < 0.025 over 1200 streams",
			rep.Verdict, row.Metric, row.Verdict, row.Test, row.PValue, row.N)
	}
	t.Logf("frozen: %.1f %% against %.1f %%, p %.3g, MDE %.2f pts", 100*row.Candidate, 100*row.Baseline, *row.PValue, 100*row.MDE)
	for s := range uint64(20) {
		a, b := streams600("a", 600, 100+2*s, false), streams600("b", 600, 101+2*s, false)
		rep, err := Compare(a, b, o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != Pass || !rep.Pass {
			for _, r := range rep.Rows {
				t.Logf("  %s %v→%v [%v, %v] mde %v %s", r.Metric, r.Baseline, r.Candidate, r.Low, r.High, r.MDE, r.Verdict)
			}
			t.Errorf("pair %d (seeds %d, %d): %s, want pass", s, 100+2*s, 101+2*s, rep.Verdict)
		}
	}
	// The test's false alarm rate on identical runs at this base rate,
	// exactly: the sum over both counts of P(kb)·P(kc)·[fails].
	var size float64
	for kb := range 40 {
		for kc := range 40 {
			if freezeFails(kb, 600, kc, 600, 0.025, o.Tolerance) {
				size += binomPMF(600, 1.2/231.2, kb) * binomPMF(600, 1.2/231.2, kc)
			}
		}
	}
	if size > 0.025 {
		t.Errorf("false alarm rate %.4f above α", size)
	}
	t.Logf("false alarm rate of the freeze test on identical runs at a 0.52 %% base share: %.4f", size)
	rep, err = Compare(streams600("a", 10, 1, false), streams600("b", 10, 2, false), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Inconclusive || rep.Pass || !slices.Contains(rep.Inconclusive, FrozenMetric) {
		t.Errorf("10 streams a side: %s (inconclusive %v), want inconclusive on %s", rep.Verdict, rep.Inconclusive, FrozenMetric)
	}
}

// TestFreezeMDELarge: the exact power stays fast and finite at 50,000
// streams a side (no overflow of the binomial coefficients).
func TestFreezeMDELarge(t *testing.T) {
	m := freezeMDE(0.05, 50000, 50000, 0.025, 0.05)
	if !(m > 0 && m < 0.01) {
		t.Errorf("MDE at 50,000 streams a side and a 5 %% share: %v, want in (0, 1 point)", m)
	}
	if p := fisherUpper(2500, 50000, 2700, 50000); !(p > 0 && p < 0.01) {
		t.Errorf("p-value of 5.4 %% against 5 %% at 50,000: %v", p)
	}
}
