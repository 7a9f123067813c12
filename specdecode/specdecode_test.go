package specdecode

import (
	"math"
	"strings"
	"testing"
)

// moments of the tokens a verify step yields under iid acceptance:
// T = j+1 with probability α^j(1−α) for j < k, and k+1 with probability α^k.
func iidMoments(alpha float64, k int) (mean, variance float64) {
	var m1, m2 float64
	for j := range k {
		p := math.Pow(alpha, float64(j)) * (1 - alpha)
		t := float64(j + 1)
		m1 += p * t
		m2 += p * t * t
	}
	p := math.Pow(alpha, float64(k))
	m1 += p * float64(k+1)
	m2 += p * float64((k+1)*(k+1))
	return m1, m2 - m1*m1
}

// TestIIDTokensPerStepConverges checks that the mean tokens per verify step
// approaches (1 − α^(k+1))/(1 − α), within 4 standard errors of the sample.
func TestIIDTokensPerStepConverges(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		k     int
	}{{0.8, 4}, {0.3, 4}, {0.6, 2}, {0.95, 8}, {0, 3}, {1, 5}} {
		m := New(Config{Method: NGram, K: c.k, Acceptance: Acceptance{kind: IID, p: [4]float64{c.alpha}}})
		var st Stream
		m.Start(&st, 42, 1<<30)
		const n = 200000
		sum := 0.0
		for range n {
			sum += float64(m.Draw(&st, c.k) + 1)
		}
		got := sum / n
		want := ExpectedTokens(c.alpha, c.k)
		mean, variance := iidMoments(c.alpha, c.k)
		if math.Abs(mean-want) > 1e-12 {
			t.Fatalf("closed form %v and moment sum %v disagree", want, mean)
		}
		tol := 4 * math.Sqrt(variance/n)
		if math.Abs(got-want) > tol+1e-12 {
			t.Errorf("α=%v k=%d: mean tokens per step %.5f, want %.5f ± %.5f", c.alpha, c.k, got, want, tol)
		}
	}
}

func TestPositionDecayFrontLoads(t *testing.T) {
	a, err := ParseAcceptance("position-decay:0.9,0.8")
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Method: EAGLE, K: 4, Acceptance: a})
	var st Stream
	m.Start(&st, 7, 1<<30)
	const n = 100000
	var reached [5]int
	for range n {
		acc := m.Draw(&st, 4)
		for j := 0; j <= acc && j < 5; j++ {
			reached[j]++
		}
	}
	// P(position j accepted | reached) = 0.9·0.8^j.
	for j := range 4 {
		got := float64(reached[j+1]) / float64(reached[j])
		want := 0.9 * math.Pow(0.8, float64(j))
		if math.Abs(got-want) > 0.01 {
			t.Errorf("position %d: conditional acceptance %.3f, want %.3f", j, got, want)
		}
	}
}

func TestPerRequestModels(t *testing.T) {
	meanOver := func(spec string, requests, steps int) float64 {
		a, err := ParseAcceptance(spec)
		if err != nil {
			t.Fatal(err)
		}
		m := New(Config{Method: NGram, K: 1, Acceptance: a})
		acc, drafted := 0, 0
		for r := range requests {
			var st Stream
			m.Start(&st, uint64(r)*7919+1, steps*2)
			for range steps {
				x := m.Draw(&st, 1)
				acc += x
				drafted++
				m.Record(&st, 1, x, x+1)
			}
		}
		return float64(acc) / float64(drafted)
	}
	for _, c := range []struct {
		spec string
		want float64
	}{
		{"beta:8,2", 0.8},
		{"ood-share:0.8,0.3,0.5", 0.55},
		{"regime:0.8,0.3,200,100", (0.8*200 + 0.3*100) / 300},
	} {
		a, _ := ParseAcceptance(c.spec)
		if math.Abs(a.MeanAlpha()-c.want) > 1e-12 {
			t.Errorf("%s: MeanAlpha %v, want %v", c.spec, a.MeanAlpha(), c.want)
		}
		if got := meanOver(c.spec, 400, 500); math.Abs(got-c.want) > 0.03 {
			t.Errorf("%s: acceptance %.3f over many requests, want about %.3f", c.spec, got, c.want)
		}
	}
}

func TestOODRegionIsInTheMiddle(t *testing.T) {
	a, _ := ParseAcceptance("ood-region:1,0,0.25,0.75")
	m := New(Config{Method: NGram, K: 1, Acceptance: a})
	var st Stream
	m.Start(&st, 3, 1000)
	for pos := 0; pos < 1000; {
		x := m.Draw(&st, 1)
		f := float64(pos) / 1000
		if inside := f >= 0.25 && f < 0.75; inside != (x == 0) {
			t.Fatalf("token %d: accepted %d, inside the OOD region %v", pos, x, inside)
		}
		m.Record(&st, 1, x, x+1)
		pos += x + 1
	}
}

func TestFallbackStopsAndRetries(t *testing.T) {
	a, _ := ParseAcceptance("regime:1,0,50,50")
	m := New(Config{Method: NGram, K: 4, Acceptance: a, Fallback: Fallback{Window: 4, Threshold: 0.5, CooldownTokens: 30}})
	var st Stream
	m.Start(&st, 11, 1<<20)
	stopped, resumed := false, false
	for range 2000 {
		if !m.Active(&st) {
			stopped = true
			m.Record(&st, 0, 0, 1)
			continue
		}
		if stopped {
			resumed = true
		}
		x := m.Draw(&st, 4)
		m.Record(&st, 4, x, x+1)
	}
	if !stopped || !resumed || !st.FellBack {
		t.Errorf("stopped %v, resumed %v, FellBack %v: want all true", stopped, resumed, st.FellBack)
	}
}

func TestSameSeedSameLuck(t *testing.T) {
	a, _ := ParseAcceptance("iid:0.7")
	m := New(Config{Method: NGram, K: 4, Acceptance: a})
	var s1, s2 Stream
	m.Start(&s1, 99, 100)
	m.Start(&s2, 99, 100)
	for range 100 {
		if m.Draw(&s1, 4) != m.Draw(&s2, 4) {
			t.Fatal("same seed, different draws")
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"iid:1.5", "must be in [0,1]"},
		{"iid:-0.1", "must be in [0,1]"},
		{"iid", "expected A"},
		{"iid:0.5,0.2", "expected A"},
		{"magic:0.5", "unknown acceptance model"},
		{"position-decay:0.8,x", "D must be a number"},
		{"beta:0,2", "beta: A and B"},
		{"regime:0.8,0.3,0,10", "mean phase lengths"},
		{"ood-region:0.8,0.3,0.7,0.2", "FROM 0.7 is after TO 0.2"},
		{"iid:NaN", "must be a number"},
	} {
		_, err := ParseAcceptance(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseAcceptance(%q) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Method: "lookahead", K: 4}, "unknown proposer"},
		{Config{Method: NGram, K: 0, Acceptance: Acceptance{kind: IID, p: [4]float64{0.5}}}, "spec_decode.k"},
		{Config{Method: NGram, K: 4}, "needs an acceptance model"},
		{Config{Method: DraftModel, K: 4, Acceptance: Acceptance{kind: IID, p: [4]float64{0.5}}}, "needs a model"},
		{Config{Method: NGram, K: 4, Acceptance: Acceptance{kind: IID, p: [4]float64{0.5}}, Fallback: Fallback{Threshold: 2}}, "fallback.threshold"},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, spec := range []string{"iid:0.8", "position-decay:0.9,0.85", "beta:8,2", "regime:0.8,0.3,200,100", "ood-share:0.8,0.3,0.25", "ood-region:0.8,0.3,0.3,0.7"} {
		a, err := ParseAcceptance(spec)
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != spec {
			t.Errorf("String() = %q, want %q", a.String(), spec)
		}
	}
}

func TestDrawDoesNotAllocate(t *testing.T) {
	a, _ := ParseAcceptance("regime:0.8,0.3,200,100")
	m := New(Config{Method: NGram, K: 4, Acceptance: a, Fallback: Fallback{Window: 8, Threshold: 0.5}})
	var st Stream
	m.Start(&st, 1, 1000)
	if n := testing.AllocsPerRun(1000, func() {
		x := m.Draw(&st, 4)
		m.Record(&st, 4, x, x+1)
		m.Active(&st)
	}); n != 0 {
		t.Errorf("drawing allocates %v times per step", n)
	}
}

func FuzzParseAcceptance(f *testing.F) {
	for _, s := range []string{"iid:0.8", "regime:0.8,0.3,200,100", "beta:0.001,0.001", "ood-region:0,1,0,1", ":", "iid:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAcceptance(s)
		if err != nil {
			return
		}
		b, err := ParseAcceptance(a.String())
		if err != nil || a != b {
			t.Fatalf("%q: round trip gave %v, %v", s, b, err)
		}
		m := New(Config{Method: NGram, K: 4, Acceptance: a})
		var st Stream
		m.Start(&st, 1, 100)
		for range 10 {
			if x := m.Draw(&st, 4); x < 0 || x > 4 {
				t.Fatalf("%q: drew %d of 4", s, x)
			}
		}
	})
}
