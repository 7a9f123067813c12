package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/sim/scenario"
)

// TestFitLinearRecovers: NNLS recovers the coefficients of noiseless
// synthetic steps, and a term no row exercises comes out 0, not negative.
func TestFitLinearRecovers(t *testing.T) {
	want := cost.LinearConfig{C0US: 2500, C1USPerPrefillToken: 40, C2USPerDecodeSeq: 90, C3USPerDecodeContextToken: 0.3}
	m, err := cost.NewLinear(want)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var steps []Step
	for i := range 60 {
		var b cost.Batch
		if r.IntN(3) == 0 {
			b.PrefillSeqs, b.PrefillTokens = 1, int64(1+r.IntN(2000))
		}
		b.DecodeSeqs = 1 + r.IntN(100)
		b.DecodeContext = int64(b.DecodeSeqs * (10 + r.IntN(3000)))
		steps = append(steps, Step{Line: i + 2, Batch: b, MS: float64(m.StepNS(&b)) / 1e6})
	}
	got, err := FitLinear(steps)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"c0", got.C0US, want.C0US}, {"c1", got.C1USPerPrefillToken, want.C1USPerPrefillToken},
		{"c2", got.C2USPerDecodeSeq, want.C2USPerDecodeSeq}, {"c3", got.C3USPerDecodeContextToken, want.C3USPerDecodeContextToken}} {
		if math.Abs(c.got-c.want) > 1e-3*c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if got.C4USPerPrefillTokenContext < 0 || got.C4USPerPrefillTokenContext > 1e-6 {
		t.Errorf("c4 = %g, want 0 (the rows have no prefill × context beyond c·c)", got.C4USPerPrefillTokenContext)
	}
	fm, _ := cost.NewLinear(got)
	if q := Quality(fm, steps, 3); q.R2 < 0.9999 || q.MAPE > 1e-3 || len(q.Worst) != 3 {
		t.Errorf("quality %+v", q)
	}
}

func TestReadStepsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data, want string }{
		{"no header", "", "expected a CSV header"},
		{"wrong columns", "a,b\n1,2\n", "expected columns prefill_tokens"},
		{"bad number", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1,x,3,4\n", "line 2: decode_seqs: expected a number"},
		{"zero time", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1,2,3,0\n", "line 2: duration_ms: a step takes a positive time"},
		{"no rows", "prefill_tokens,decode_seqs,decode_context,duration_ms\n", "no step rows"},
		{"NaN time", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1,2,3,4\n1,2,3,NaN\n", "line 3: duration_ms: expected a number in [0, 1e+09], got \"NaN\""},
		{"Inf time", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1,2,3,+Inf\n", "line 2: duration_ms: expected a number in [0, 1e+09]"},
		{"negative time", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1,2,3,-4\n", "line 2: duration_ms: expected a number in [0, 1e+09]"},
		{"NaN tokens", "prefill_tokens,decode_seqs,decode_context,duration_ms\nnan,2,3,4\n", "line 2: prefill_tokens: expected a number"},
		{"huge tokens", "prefill_tokens,decode_seqs,decode_context,duration_ms\n1e12,2,3,4\n", "line 2: prefill_tokens: expected a number in [0, 1e+09]"},
		{"Sarathi NaN seconds", "batch_num_prefill_tokens,batch_num_decode_tokens,batch_execution_time\n10,0,nan\n", "line 2: batch_execution_time: expected a number"},
		{"Splitwise Inf", "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\nllama2-70b,a100-80gb,4,10,1,1,Inf,1\n", "line 2: prompt_time: expected a number"},
		{"Splitwise product", "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\nllama2-70b,a100-80gb,4,1e9,1e9,1,1,1\n", "line 2: batch_size × prompt_size"},
	} {
		p := filepath.Join(dir, c.name+".csv")
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadSteps(p, Select{Model: "llama-2-70b", GPU: "a100-80gb", TP: 4}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestFitRooflineImproves: fitting the roofline to steps it predicts with
// other efficiencies brings the error down.
func TestFitRooflineImproves(t *testing.T) {
	model, _ := cost.LookupModel("llama-3.1-8b")
	gpu, _ := cost.LookupGPU("a100-80gb")
	truth := cost.DefaultRoofline()
	truth.MemoryEfficiency, truth.OverheadUS = 0.6, 3000
	rm, err := cost.NewRoofline(model, gpu, 1, truth)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	for d := 1; d <= 128; d *= 2 {
		b := cost.Batch{DecodeSeqs: d, DecodeContext: int64(d * 1000)}
		steps = append(steps, Step{Batch: b, MS: float64(rm.StepNS(&b)) / 1e6})
	}
	start := cost.DefaultRoofline()
	m0, _ := cost.NewRoofline(model, gpu, 1, start)
	fit, err := FitRoofline(model, gpu, 1, start, nil, steps)
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := cost.NewRoofline(model, gpu, 1, fit)
	before, after := Quality(m0, steps, 0).MAPE, Quality(m1, steps, 0).MAPE
	if after > before/5 || after > 0.02 {
		t.Errorf("MAPE %.4f before, %.4f after the fit; want at most a fifth and below 2%%", before, after)
	}
}

// TestFitRooflineUnderGraphs: steps timed on a server replaying CUDA
// graphs (small decode batches padded, with the graph's kernel floor;
// prefills beyond the largest capture size eager) are fitted under graphs
// with the graph's floor among the fields, and reproduced. One server's
// steps do not tell that floor from the step overhead (every graph step
// pays both once); the fit trades one for the other, so only the fitted
// steps are checked.
func TestFitRooflineUnderGraphs(t *testing.T) {
	model, _ := cost.LookupModel("llama-3.1-8b")
	gpu, _ := cost.LookupGPU("h100-sxm-80gb")
	sizes := cost.DefaultCaptureSizes(256, 2048)
	truth := cost.DefaultRoofline()
	truth.KernelOverheadUS, truth.GraphKernelOverheadUS, truth.MemoryEfficiency = 6, 2.5, 0.75
	eager, err := cost.NewRoofline(model, gpu, 1, truth)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := eager.WithCUDAGraphs(sizes)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Step
	for _, d := range []int{1, 3, 8, 9, 17, 40, 100, 200} {
		b := cost.Batch{DecodeSeqs: d, DecodeContext: int64(d * 800)}
		steps = append(steps, Step{Batch: b, MS: float64(rm.StepNS(&b)) / 1e6})
	}
	for _, p := range []int{600, 1024, 2048, 4096} {
		var b cost.Batch
		b.AddPrefill(0, p)
		steps = append(steps, Step{Batch: b, MS: float64(rm.StepNS(&b)) / 1e6})
	}
	start := cost.DefaultRoofline()
	fit, err := FitRoofline(model, gpu, 1, start, sizes, steps)
	if err != nil {
		t.Fatal(err)
	}
	if fit.GraphKernelOverheadUS == start.GraphKernelOverheadUS {
		t.Error("graph_kernel_overhead_us was not fitted")
	}
	m0, _ := cost.NewRoofline(model, gpu, 1, start)
	m0, _ = m0.WithCUDAGraphs(sizes)
	m1, _ := cost.NewRoofline(model, gpu, 1, fit)
	m1, _ = m1.WithCUDAGraphs(sizes)
	before, after := Quality(m0, steps, 0).MAPE, Quality(m1, steps, 0).MAPE
	if after > 0.01 || after > before/5 {
		t.Errorf("MAPE %.4f before, %.4f after the fit under graphs", before, after)
	}
}

// A Splitwise row is a prompt-phase step (batch_size whole prompts) and a
// token-phase step at the mean context; other setups' rows are skipped and
// unknown parts cannot be selected.
func TestReadStepsSplitwise(t *testing.T) {
	p := filepath.Join(t.TempDir(), "perf_model.csv")
	data := "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,e2e_time,tensor_parallel\n" +
		"llama2-70b,a100-80gb,512,4,128,250.5,45.25,1,4\n" +
		"llama2-70b,a100-80gb,512,4,128,250.5,45.25,1,8\n" +
		"bloom-176b,a100-80gb,512,4,128,250.5,45.25,1,4\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	steps, notes, err := ReadSteps(p, Select{Model: "llama-2-70b", GPU: "a100-80gb", TP: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || len(notes) != 1 {
		t.Fatalf("got %d steps, notes %q; want 2 steps from line 2", len(steps), notes)
	}
	pre, dec := steps[0], steps[1]
	if pre.Line != 2 || pre.MS != 250.5 || pre.Batch.PrefillSeqs != 4 || pre.Batch.PrefillTokens != 2048 || pre.Batch.PrefillTokCtx != 4*512*512 || pre.Batch.DecodeSeqs != 0 {
		t.Errorf("prompt phase %+v", pre)
	}
	if dec.MS != 45.25 || dec.Batch.DecodeSeqs != 4 || dec.Batch.DecodeContext != 4*(512+64) || dec.Batch.PrefillTokens != 0 {
		t.Errorf("token phase %+v", dec)
	}
	if _, _, err := ReadSteps(p, Select{Model: "llama-3.1-8b", GPU: "a100-80gb", TP: 4}); err == nil ||
		!strings.Contains(err.Error(), "it has: --model llama-2-70b --gpu a100-80gb --tp 4; --model llama-2-70b --gpu a100-80gb --tp 8") {
		t.Errorf("unselected setup: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\nllama2-70b,a100-80gb,512,x,128,1,1,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadSteps(bad, Select{Model: "llama-2-70b", GPU: "a100-80gb", TP: 4}); err == nil || !strings.Contains(err.Error(), "line 2: batch_size: expected a number") {
		t.Errorf("bad number: %v", err)
	}
}

// Every fittable field is read and written by its path: a tuning moves what
// it names, the kernel floors included.
func TestTunableFieldsRoundTrip(t *testing.T) {
	for _, name := range TunableNames() {
		c := sim.DefaultConfig()
		p := TunableParams[name]
		want := p.Lo + 0.37*(p.Hi-p.Lo)
		if err := scenario.Set(&c, p.Path, fmt.Sprintf("%g", want)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := FieldValue(c, p.Path); err != nil || got != want {
			t.Errorf("%s: FieldValue %v, %v; set %v", name, got, err, want)
		}
	}
	for _, floor := range []string{"cost.roofline.kernel_overhead_us", "cost.roofline.attention_overhead_us", "cost.roofline.graph_kernel_overhead_us"} {
		if _, ok := TunableParams[floor]; !ok {
			t.Errorf("%s cannot be fitted", floor)
		}
	}
}

// A profile written before CUDA graphs were modelled has no graph kernel
// floor; loading it gives the default, not 0. One that names it keeps it.
func TestProfileWithoutGraphFloorTakesDefault(t *testing.T) {
	dir := t.TempDir()
	write := func(name, extra string) string {
		p := filepath.Join(dir, name)
		body := "cost:\n  model: roofline\n  roofline:\n    compute_efficiency: 0.7\n    memory_efficiency: 0.8\n" +
			"    all_reduce_efficiency: 0.8\n    kernel_overhead_us: 4\n" + extra
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, err := LoadProfile(write("old.yaml", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := old.Cost.Roofline.GraphKernelOverheadUS, cost.DefaultRoofline().GraphKernelOverheadUS; got != want {
		t.Errorf("old profile: graph_kernel_overhead_us %v, want the default %v", got, want)
	}
	named, err := LoadProfile(write("new.yaml", "    graph_kernel_overhead_us: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := named.Cost.Roofline.GraphKernelOverheadUS; got != 0 {
		t.Errorf("profile naming 0: graph_kernel_overhead_us %v", got)
	}
}

// A profile carries the step-time variance a fit found, and only then:
// ProfileOf writes noise and hiccups when not 0, Apply puts them back, and
// Validate names a bad one.
func TestProfileCarriesVariance(t *testing.T) {
	c := sim.DefaultConfig()
	if p := ProfileOf(c, "x"); p.Cost.NoiseCV != nil || p.Cost.HiccupRatePerS != nil || p.Cost.HiccupMS != nil {
		t.Fatalf("no variance, yet the profile has %+v", p.Cost)
	}
	c.Cost.NoiseCV, c.Cost.HiccupRatePerS, c.Cost.HiccupMS = 0.03, 0.2, 120
	p := ProfileOf(c, "x")
	got := sim.DefaultConfig()
	p.Apply(&got)
	if got.Cost.NoiseCV != 0.03 || got.Cost.HiccupRatePerS != 0.2 || got.Cost.HiccupMS != 120 {
		t.Errorf("applied %+v, want noise 0.03, hiccups 0.2/s of 120 ms", got.Cost)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	bad := -1.0
	p.Cost.NoiseCV = &bad
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "cost.noise_cv") {
		t.Errorf("noise_cv -1: %v, want an error naming cost.noise_cv", err)
	}
}
