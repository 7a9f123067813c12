package calibrate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// spaced is a measured run of n requests sent alone (one every 2 s) with
// prompts of the given lengths; the measured times only anchor the errors
// (Identify looks at how the simulated figures move).
func spaced(name string, lens []int) ingest.Recording {
	rec := ingest.Recording{Name: name, File: name}
	for i, l := range lens {
		rec.Streams = append(rec.Streams, measuredStream(i, float64(i)*2e9, l))
	}
	return rec
}

// burst is the same requests all sent at t = 0.
func burst(name string, lens []int) ingest.Recording {
	rec := ingest.Recording{Name: name, File: name, NoArrivals: true, Load: ingest.Load{Strategy: ingest.StrategyAllAtOnce}}
	for i, l := range lens {
		rec.Streams = append(rec.Streams, measuredStream(i, 0, l))
	}
	return rec
}

func measuredStream(i int, at float64, prompt int) ingest.Stream {
	gaps := make([]float64, 15)
	for k := range gaps {
		gaps[k] = 8e6 + float64(k%3)*1e6
	}
	return ingest.Stream{ID: i, Arrival: at, InputTokens: prompt, OutputTokens: 16, TTFT: 30e6, E2EL: 30e6 + 15*9e6, Gaps: gaps, Chunks: 16}
}

func identifyConfig() sim.Config {
	c := sim.DefaultConfig()
	c.Model, c.GPU = "llama-3.1-8b", "h100-sxm-80gb"
	return c
}

func field(t *testing.T, id *Identification, path string) Separability {
	t.Helper()
	for _, s := range id.Fields {
		if s.Path == path {
			return s
		}
	}
	t.Fatalf("%s not among %+v", path, id.Fields)
	return Separability{}
}

// TestFrontEndNotSeparable: requests sent one at a time with prompts of
// one length pay the serial work per token and per request as a constant
// on TTFT, which the fixed latency fitted anyway makes as well: neither is
// separable, and detokenization, off the step's path (vLLM V1), moves
// nothing. calibrate says so in the words.
func TestFrontEndNotSeparable(t *testing.T) {
	lens := make([]int, 12)
	for i := range lens {
		lens[i] = 512
	}
	recs := []ingest.Recording{spaced("light", lens)}
	id, err := Identify(identifyConfig(), recs, DefaultTuned, FrontEndParams, nil, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range id.Fields {
		if s.Separable {
			t.Errorf("%s: separable (independence %.3f, movement %.4f, standard error %.3g) on one prompt length at light load", s.Path, s.Independence, s.Movement, s.StdErr)
		}
	}
	if s := field(t, id, "server.serial_us_per_prompt_token"); !(s.Independence < 0.01) || !(s.StdErr > 100) || !slices.Contains(s.Like, "server.request_overhead_ms") {
		t.Errorf("per token: independence %.3f, standard error %.3g steps, like %v; want < 0.01, over 100, like the fixed latency", s.Independence, s.StdErr, s.Like)
	}
	if s := field(t, id, "server.detokenize_us_per_output_token"); s.Movement != 0 || !math.IsInf(s.StdErr, 1) {
		t.Errorf("detokenization off the engine's path moved the figures by %g (standard error %g)", s.Movement, s.StdErr)
	}
	sum := id.Summary()
	t.Log(sum)
	for _, want := range []string{"front end: not separable from step time on this data (", "server.serial_us_per_prompt_token: known to 10.0 ± more than 100 steps of 2.50 only", "matched by", "no target figure moves with it"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q: %s", want, sum)
		}
	}
	if len(id.Fit()) != 0 {
		t.Errorf("fit %v, want none", id.Fit())
	}
}

// TestFrontEndSeparable: a burst of prompts from 64 to 4,096 tokens queues
// for the serial stage (the last request waits for every prompt before
// it), which no step-time field or fixed latency reproduces beside the
// same requests sent alone: the per-token cost is separable, and a default
// tuning fits it. Holding it (a flag gave it) keeps it out.
func TestFrontEndSeparable(t *testing.T) {
	var lens []int
	for i := range 24 {
		lens = append(lens, 64<<(i%7))
	}
	recs := []ingest.Recording{spaced("light", lens), burst("burst", lens)}
	base := identifyConfig()
	id, err := Identify(base, recs, DefaultTuned, FrontEndParams, nil, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(id.Summary(), " condition ", id.Condition)
	tok := field(t, id, "server.serial_us_per_prompt_token")
	if !tok.Separable || !(tok.StdErr <= MaxStandardError) || !(tok.Movement > 0.05) {
		t.Errorf("per token: %+v; want separable on a burst of varied prompts", tok)
	}
	if math.IsInf(id.Condition, 1) || !(id.Condition > 1) {
		t.Errorf("condition number %g", id.Condition)
	}
	if !strings.Contains(id.Summary(), "front end: fitted beside step time (server.serial_us_per_prompt_token: separable, 10.0 ± ") {
		t.Errorf("summary: %s", id.Summary())
	}
	res, err := Tune(base, recs, TuneOptions{FrontEnd: true, Evals: 4, Validate: Options{Seeds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Values["server.serial_us_per_prompt_token"]; !ok || res.FrontEnd == nil {
		t.Errorf("a default tuning did not fit the separable per-token cost: %v", res.Values)
	}
	held, err := Tune(base, recs, TuneOptions{FrontEnd: true, Hold: []string{"server.serial_us_per_prompt_token"}, Evals: 4, Validate: Options{Seeds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := held.Values["server.serial_us_per_prompt_token"]; ok {
		t.Errorf("a held field was fitted: %v", held.Values)
	}
	if s := field(t, held.FrontEnd, "server.serial_us_per_prompt_token"); !s.Held || s.Separable {
		t.Errorf("held: %+v", s)
	}
	// Extra fields join the default set and the front end's.
	extra, err := Tune(base, recs, TuneOptions{FrontEnd: true, Extra: []string{"cost.noise_cv"}, Evals: 4, Validate: Options{Seeds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(slices.Clone(DefaultTuned), "cost.noise_cv", "server.serial_us_per_prompt_token") {
		if _, ok := extra.Values[p]; !ok {
			t.Errorf("with an extra field: %s not fitted: %v", p, extra.Values)
		}
	}
	// Naming the fields (--fit) fits those alone.
	named, err := Tune(base, recs, TuneOptions{Params: DefaultTuned, FrontEnd: true, Evals: 4, Validate: Options{Seeds: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if named.FrontEnd != nil || len(named.Values) != len(DefaultTuned) {
		t.Errorf("--fit given: front end identified %v, values %v", named.FrontEnd, named.Values)
	}
}

// Detokenization in the engine loop (vLLM V0) lengthens every step per
// sequence, exactly as seq_overhead_us does: it moves the figures but is
// never separable from it.
func TestDetokenizationInEngineNotSeparable(t *testing.T) {
	base := identifyConfig()
	base.Server.Frontend = "vllm-v0"
	var lens []int
	for i := range 16 {
		lens = append(lens, 64<<(i%6))
	}
	recs := []ingest.Recording{spaced("light", lens), burst("burst", lens)}
	id, err := Identify(base, recs, DefaultTuned, FrontEndParams, nil, Options{Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := field(t, id, "server.detokenize_us_per_output_token")
	if s.Separable || !(s.Movement > 0.005) || !(s.Independence < 0.05) || len(s.Like) == 0 || s.Like[0] != "cost.roofline.seq_overhead_us" {
		t.Errorf("detokenization in the engine: %+v; want it moving the figures, matched by seq_overhead_us", s)
	}
	if s.Value != 30 {
		t.Errorf("start value %g, want the vllm-v0 profile's 30", s.Value)
	}
}

// Under CUDA graphs a default tuning fits the kernel floors too; eagerly it
// does not.
func TestDefaultTuningFitsGraphFloors(t *testing.T) {
	recs := []ingest.Recording{spaced("light", []int{128, 512, 2048})}
	for _, eager := range []bool{true, false} {
		base := identifyConfig()
		base.Cost.EnforceEager = eager
		res, err := Tune(base, recs, TuneOptions{Evals: 2, Validate: Options{Seeds: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range GraphTuned {
			if _, ok := res.Values[p]; ok == eager {
				t.Errorf("enforce_eager %v: %s fitted %v", eager, p, ok)
			}
		}
	}
}
