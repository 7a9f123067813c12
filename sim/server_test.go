package sim_test

import (
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/frontend"
)

// TestServerFrontEnd: the fixed overhead adds to every TTFT; the serial
// stage makes requests that arrive together queue for it.
func TestServerFrontEnd(t *testing.T) {
	ttfts := func(fixed, serial float64) []sim.Time {
		cfg := linearConfig(1000, 0)
		cfg.Server = sim.ServerConfig{RequestOverheadMS: fixed, SerialMSPerRequest: serial}
		res := replay(t, cfg, req(0, 16, 2), req(0, 16, 2), req(0, 16, 2)).Run()
		var out []sim.Time
		for _, s := range res.Streams.All() {
			out = append(out, s.TTFT)
		}
		return out
	}
	base, fixed, serial := ttfts(0, 0), ttfts(5, 0), ttfts(0, 2)
	for i := range base {
		if fixed[i] != base[i]+5*sim.Millisecond {
			t.Errorf("request %d: TTFT %v with a 5 ms overhead, %v without", i, fixed[i], base[i])
		}
	}
	if serial[0] < 2*sim.Millisecond || serial[2] < 6*sim.Millisecond {
		t.Errorf("TTFTs %v with a 2 ms serial stage, want the third ≥ 6 ms", serial)
	}
	cfg := sim.DefaultConfig()
	cfg.Server.SerialMSPerRequest = -1
	if err := cfg.Validate(); err == nil {
		t.Error("a negative serial_ms_per_request passed validation")
	}
}

// TestServerFrontEndPerToken: tokenization is serial work per prompt
// token, so a burst's later requests wait for the earlier prompts; with
// two replicas there are two serial stages and the burst clears in half
// the time. Ready times stay in arrival order.
func TestServerFrontEndPerToken(t *testing.T) {
	ttfts := func(perToken float64, replicas int) []sim.Time {
		cfg := linearConfig(1000, 0)
		cfg.Server = sim.ServerConfig{SerialUSPerPromptToken: perToken}
		if replicas > 1 {
			cfg.Cluster.Replicas = replicas
		}
		res := replay(t, cfg, req(0, 1000, 2), req(0, 1000, 2), req(0, 1000, 2), req(0, 1000, 2)).Run()
		out := make([]sim.Time, res.Streams.Len())
		for i := range res.Streams.Len() {
			s := res.Streams.At(i)
			out[s.ID] = s.TTFT
		}
		return out
	}
	base, one := ttfts(0, 1), ttfts(10, 1) // 10 µs × 1,000 tokens = 10 ms each
	for i := range base {
		if want := sim.Time(i+1) * 10 * sim.Millisecond; one[i] < base[i]+want-sim.Millisecond {
			t.Errorf("request %d: TTFT %v with 10 ms of serial tokenization each, %v without; want ≥ %v more", i, one[i], base[i], want)
		}
	}
	two := ttfts(10, 2)
	if !(two[3] < one[3]) || two[3] < 20*sim.Millisecond {
		t.Errorf("last TTFT %v with two front ends, %v with one: want less, and ≥ 20 ms (two requests per stage)", two[3], one[3])
	}
	cfg := sim.DefaultConfig()
	cfg.Server.SerialUSPerPromptToken = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "server.serial_us_per_prompt_token") {
		t.Errorf("a negative serial_us_per_prompt_token: %v, want an error naming the field", err)
	}
}

// TestFrontendProfiles: a profile fills the fields left at zero or at the
// built-in default, and a value given beside it wins. vLLM V1 hands each
// request to the engine process (handoff_ms adds to every TTFT) and
// detokenizes beside the engine (steps unchanged); vLLM V0 detokenizes in
// the engine loop, so every step is longer by detokenize_us_per_output_token
// per sequence in it.
func TestFrontendProfiles(t *testing.T) {
	v1, err := sim.ServerConfig{Frontend: "vllm-v1"}.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	want := sim.ServerConfig{Frontend: "vllm-v1", SerialMSPerRequest: frontend.ProfileSerialMSPerRequest,
		SerialUSPerPromptToken: frontend.TokenizeUSPerPromptToken, HandoffMS: frontend.ProfileHandoffMS,
		DetokenizeUSPerOutputToken: frontend.ProfileDetokenizeUSPerOutputToken}
	if v1 != want {
		t.Errorf("vllm-v1 resolves to %+v, want %+v", v1, want)
	}
	def := sim.DefaultServer()
	def.Frontend = "VLLM-V0"
	v0, err := def.Resolved()
	if err != nil || v0.SerialUSPerPromptToken != frontend.TokenizeUSPerPromptToken || !v0.DetokenizeInEngine || v0.HandoffMS != 0 {
		t.Errorf("the default server under vllm-v0 resolves to %+v, %v", v0, err)
	}
	given, _ := sim.ServerConfig{Frontend: "vllm-v1", SerialUSPerPromptToken: 4}.Resolved()
	if given.SerialUSPerPromptToken != 4 {
		t.Errorf("a value given beside the profile: %g, want 4", given.SerialUSPerPromptToken)
	}
	if _, err := (sim.ServerConfig{Frontend: "vllm-v9"}).Resolved(); err == nil || !strings.Contains(err.Error(), "server.frontend: unknown profile \"vllm-v9\"; valid: vllm-v1, vllm-v0, none") {
		t.Errorf("unknown profile: %v", err)
	}
	bad := sim.DefaultConfig()
	bad.Server.HandoffMS = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "server.handoff_ms") {
		t.Errorf("a negative handoff_ms: %v", err)
	}

	run := func(s sim.ServerConfig) *sim.Result {
		cfg := linearConfig(1000, 0)
		cfg.Server = s
		return replay(t, cfg, req(0, 16, 5), req(0, 16, 5), req(0, 16, 5)).Run()
	}
	base := run(sim.ServerConfig{})
	hand := run(sim.ServerConfig{HandoffMS: 0.1})
	detokV1 := run(sim.ServerConfig{DetokenizeUSPerOutputToken: 30})
	detokV0 := run(sim.ServerConfig{DetokenizeUSPerOutputToken: 30, DetokenizeInEngine: true})
	for i := range 3 {
		b := stream(t, base, i)
		if h := stream(t, hand, i); h.TTFT != b.TTFT+100*sim.Microsecond || h.E2EL != b.E2EL+100*sim.Microsecond {
			t.Errorf("request %d: handoff 0.1 ms gives TTFT %v E2EL %v, without %v %v", i, h.TTFT, h.E2EL, b.TTFT, b.E2EL)
		}
		if d := stream(t, detokV1, i); d.E2EL != b.E2EL {
			t.Errorf("request %d: detokenization beside the engine moved E2EL %v → %v", i, b.E2EL, d.E2EL)
		}
		// Three sequences in every step, five steps: 3 × 30 µs a step.
		if d := stream(t, detokV0, i); d.E2EL != b.E2EL+5*90*sim.Microsecond {
			t.Errorf("request %d: detokenization in the engine gives E2EL %v, want %v + 450 µs", i, d.E2EL, b.E2EL)
		}
	}
}
