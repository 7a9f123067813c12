package sim_test

import (
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

func specConfig(method, acceptance string, k int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.SpecDecode.Method, cfg.SpecDecode.K = method, k
	if err := cfg.SpecDecode.Acceptance.UnmarshalText([]byte(acceptance)); err != nil {
		panic(err)
	}
	return cfg
}

// TestSpecSpeedupMatchesTheory runs one long stream alone (a batch of one)
// with a step whose cost does not depend on the tokens it verifies, and a
// proposer costing c of a target step per draft token: the TPOT speed-up
// must be E/(k·c + 1), E = (1 − α^(k+1))/(1 − α), within the sampling error
// of E over the run's verify steps.
func TestSpecSpeedupMatchesTheory(t *testing.T) {
	const (
		alpha  = 0.8
		k      = 4
		c      = 0.05
		c0US   = 10000.0
		output = 20000
	)
	run := func(cfg sim.Config) reports.Summary {
		cfg.Cost.Model = "linear"
		cfg.Cost.Linear = cost.LinearConfig{C0US: c0US}
		e := replay(t, cfg, workloads.Request{InputTokens: 100, OutputTokens: output, Seed: 12345})
		return reports.Summarize(e.Run(), cfg.Metrics)
	}
	base := run(sim.DefaultConfig())
	cfg := specConfig("eagle", "iid:0.8", k)
	cfg.SpecDecode.ProposerUS = c * c0US
	spec := run(cfg)

	E := specdecode.ExpectedTokens(alpha, k)
	want := E / (k*c + 1)
	got := base.TPOT.Mean / spec.TPOT.Mean
	// Standard error of the mean tokens per step over the verify steps.
	var m1, m2 float64
	for j := range k {
		p := math.Pow(alpha, float64(j)) * (1 - alpha)
		m1 += p * float64(j+1)
		m2 += p * float64((j+1)*(j+1))
	}
	m1 += math.Pow(alpha, k) * (k + 1)
	m2 += math.Pow(alpha, k) * (k + 1) * (k + 1)
	steps := float64(spec.Spec.VerifySteps)
	relSE := math.Sqrt(m2-m1*m1) / E / math.Sqrt(steps)
	t.Logf("speed-up %.4f, E/(kc+1) %.4f, mean acceptance length %.4f vs E %.4f over %.0f verify steps", got, want, spec.Spec.MeanAcceptanceLength, E, steps)
	if math.Abs(got/want-1) > 4*relSE+0.002 {
		t.Errorf("speed-up %.4f, want E/(kc+1) = %.4f ± %.2f%% (%.0f verify steps)", got, want, 400*relSE, steps)
	}
	if d := spec.Spec.MeanAcceptanceLength - E; math.Abs(d) > 4*relSE*E+0.002 {
		t.Errorf("mean acceptance length %.4f, want %.4f", spec.Spec.MeanAcceptanceLength, E)
	}
	if ar := spec.Spec.AcceptanceRate; math.Abs(ar-(E-1)/k) > 0.02 {
		t.Errorf("acceptance rate %.4f, want (E−1)/k = %.4f", ar, (E-1)/k)
	}
	// The configured α is accepted over verified drafts, at any k.
	if a := spec.Spec.AcceptancePerVerifiedDraft; math.Abs(a-alpha) > 0.02 {
		t.Errorf("acceptance per verified draft %.4f, want the configured α = %.2f", a, alpha)
	}
	if base.Spec != nil || spec.Spec == nil {
		t.Errorf("summary.spec: %v without speculation, %v with it", base.Spec, spec.Spec)
	}
	// Position 0 is accepted with probability α, position j only after all before it.
	for j, r := range spec.Spec.AcceptedByPosition {
		if w := math.Pow(alpha, float64(j+1)); math.Abs(r-w) > 0.02 {
			t.Errorf("position %d accepted %.3f of drafts, want α^%d = %.3f", j, r, j+1, w)
		}
	}
}

// The figure reported as α is the configured α for every acceptance level
// and draft length, while vLLM's accepted/drafted rate falls with k (issue
// 27: 80 % and 30 % showed as 58 % and 10 %, with nothing to say why).
func TestSpecReportsConfiguredAlpha(t *testing.T) {
	for _, alpha := range []float64{0.3, 0.8} {
		for _, k := range []int{1, 4} {
			cfg := specConfig("eagle", "iid:"+strconvF(alpha), k)
			e := replay(t, cfg, workloads.Request{InputTokens: 100, OutputTokens: 8000, Seed: 7})
			sp := reports.Summarize(e.Run(), cfg.Metrics).Spec
			if math.Abs(sp.AcceptancePerVerifiedDraft-alpha) > 0.03 {
				t.Errorf("iid:%g k=%d: acceptance per verified draft %.3f, want %g", alpha, k, sp.AcceptancePerVerifiedDraft, alpha)
			}
			if want := (specdecode.ExpectedTokens(alpha, k) - 1) / float64(k); math.Abs(sp.AcceptanceRate-want) > 0.03 {
				t.Errorf("iid:%g k=%d: acceptance rate %.3f, want (E−1)/k = %.3f", alpha, k, sp.AcceptanceRate, want)
			}
		}
	}
}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestSpecAttributionNamesRejections: with acceptance 0, every draft is
// wasted, and the stall table must name spec-rejection; the per-token view
// equals the per-chunk view when each chunk is one token.
func TestSpecAttributionNamesRejections(t *testing.T) {
	cfg := specConfig("draft-model", "iid:0", 4)
	cfg.SpecDecode.DraftModel = "llama-3.2-1b"
	cfg.Workload.Requests = 50
	cfg.Metrics.StallThresholdMS = 1 // every gap is a stall
	res, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := reports.Summarize(res.Run(), cfg.Metrics)
	if s.StallMSByCause["spec-rejection"] <= 0 || s.StallStreamsByCause["spec-rejection"] < 0.99 {
		t.Errorf("spec-rejection %.1f ms over %.0f%% of streams; want > 0 over all", s.StallMSByCause["spec-rejection"], 100*s.StallStreamsByCause["spec-rejection"])
	}
	if s.Spec.AcceptanceRate != 0 || s.Spec.MeanAcceptanceLength != 1 {
		t.Errorf("acceptance %v, mean length %v; want 0 and 1", s.Spec.AcceptanceRate, s.Spec.MeanAcceptanceLength)
	}
	if !reflect.DeepEqual(s.ITLPerToken, s.ITLPooled) {
		t.Errorf("one token per chunk, yet per-token ITL %+v differs from pooled %+v", s.ITLPerToken, s.ITLPooled)
	}
}

// TestSpecSameLuckAcrossDraftLengths: the per-request streams make runs
// with different k draw from the same per-request randomness, and a run
// repeated is identical.
func TestSpecDeterministic(t *testing.T) {
	cfg := specConfig("ngram", "beta:4,2", 4)
	cfg.Workload.Requests = 200
	a, _ := sim.New(cfg)
	b, _ := sim.New(cfg)
	ra, rb := a.Run(), b.Run()
	if reports.Summarize(ra, cfg.Metrics).Spec.Accepted != reports.Summarize(rb, cfg.Metrics).Spec.Accepted {
		t.Fatal("same config, different acceptances")
	}
}

func TestSpecBadParameters(t *testing.T) {
	for _, c := range []struct {
		mut  func(*sim.Config)
		want string
	}{
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "llama-3.1-70b" }, "is not smaller than the target"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "llama-3.1-8b" }, "is not smaller"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "qwen2.5-7b"; c.Model = "llama-3.1-70b"; c.TP = 4 }, "vocabulary"},
		{func(c *sim.Config) { c.SpecDecode.DraftModel = "nope" }, "unknown preset"},
	} {
		cfg := specConfig("draft-model", "iid:0.8", 4)
		c.mut(&cfg)
		if _, err := cfg.Resolve(); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// BenchmarkChatWorkloadSpec is BenchmarkChatWorkload with EAGLE-style
// speculation (k=4, iid α=0.8): the issue asks that speculation cost at
// most 2× the simulator's speed without it.
func BenchmarkChatWorkloadSpec(b *testing.B) {
	cfg := chatConfig(20_000)
	cfg.SpecDecode = specConfig("eagle", "iid:0.8", 4).SpecDecode
	benchmarkChat(b, cfg)
}

// BenchmarkChatWorkloadDelivery is BenchmarkChatWorkload with a client
// smoothing buffer (33 ms cadence) behind each network profile: the
// delivery issue asks that the path cost at most 2× the simulator's speed
// without it.
func BenchmarkChatWorkloadDelivery(b *testing.B) {
	for _, profile := range delivery.ProfileNames() {
		b.Run(profile, func(b *testing.B) {
			cfg := chatConfig(20_000)
			cfg.Delivery.Network.Profile = profile
			cfg.Delivery.Smoothing.CadenceMS = 33
			benchmarkChat(b, cfg)
		})
	}
}
