package frontend

import (
	"fmt"
	"strings"

	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
)

// Config models the serving front end a request passes before the
// scheduler sees it (vLLM's OpenAI API server: HTTP handling, request
// validation, tokenization, the hand-off to the engine core), so that TTFT
// is not optimistic by that overhead. Default holds the serial
// tokenization at the cited 10 µs per prompt token, as vLLM's OpenAI
// server pays it (itlsim's defaults model a vLLM-V1-like server); the
// fixed and per-request parts default to 0, since no measurement isolates
// them. `itlsim calibrate` fits the fixed part to a measured run; README
// ("What the front end costs") gives the cited figures for vLLM's.
//
// The serial work of a request is SerialMSPerRequest +
// SerialUSPerPromptToken × its prompt tokens. Each replica has one serial
// stage (vLLM runs one API server process per engine by default); a
// request takes the stage that frees first.
type Config struct {
	// Frontend names a per-version profile of vLLM's front end
	// (Profiles: vllm-v1, vllm-v0) that fills every field below
	// left at zero or at its built-in default; other values given beside it
	// override it (a zero cannot: leave the profile out to switch a part
	// off). Default "" (the fields as given).
	Frontend string `yaml:"frontend" json:"frontend"`
	// RequestOverheadMS is the fixed time, in milliseconds, from a request's
	// arrival to its reaching the scheduler, paid by every request in
	// parallel (no queueing): network and proxy hops, the HTTP exchange.
	RequestOverheadMS float64 `yaml:"request_overhead_ms" json:"request_overhead_ms"`
	// SerialMSPerRequest is front-end work done one request at a time, in
	// milliseconds per request: requests that arrive together queue for it
	// (vLLM handles requests on one asyncio loop), which spreads a burst's
	// arrivals at the scheduler.
	SerialMSPerRequest float64 `yaml:"serial_ms_per_request" json:"serial_ms_per_request"`
	// SerialUSPerPromptToken is serial work per prompt token, in
	// microseconds: tokenization (and the chat template) of the prompt.
	// vLLM's OpenAI server tokenizes on a single-thread executor
	// (vllm/entrypoints/openai/serving_engine.py, _tokenizer_executor with
	// max_workers=1; vllm-project/vllm#25301), so a burst of prompts is
	// tokenized one after another. Measured: 10.1–21.5 µs per token for
	// 131-token chat prompts with a Hugging Face tokenizer
	// (tenstorrent/tt-inference-server#2173). Default 10 (the later,
	// steady requests of that log); 0 turns it off.
	SerialUSPerPromptToken float64 `yaml:"serial_us_per_prompt_token" json:"serial_us_per_prompt_token"`
	// HandoffMS is the process hand-off from the API server to the engine,
	// in milliseconds, paid by every request in parallel after its serial
	// work (vLLM V1: msgpack over a ZMQ socket to the engine-core
	// process). Default 0.
	HandoffMS float64 `yaml:"handoff_ms" json:"handoff_ms"`
	// DetokenizeUSPerOutputToken is the detokenization of one output
	// token, in microseconds. Where it runs decides what it costs: with
	// DetokenizeInEngine (vLLM V0) the engine loop detokenizes every
	// sequence of a step before the next step starts, so each step is
	// longer by it per sequence; otherwise (vLLM V1) the API server
	// process detokenizes beside the engine, off the step's critical path,
	// and itlsim does not add it. Default 0.
	DetokenizeUSPerOutputToken float64 `yaml:"detokenize_us_per_output_token" json:"detokenize_us_per_output_token"`
	// DetokenizeInEngine puts detokenization on the engine's critical path
	// (vLLM V0). Default false.
	DetokenizeInEngine bool `yaml:"detokenize_in_engine" json:"detokenize_in_engine"`
}

// Profile is a server version's front end, each figure from public
// sources (docs/fidelity.md, "The front end's sources", lists them; a test
// holds that table to these values).
type Profile struct {
	Name        string
	Description string
	Server      Config
}

// Front-end figures shared by the profiles (see docs/fidelity.md, "The
// front end's sources").
const (
	// TokenizeUSPerPromptToken: a Hugging Face fast tokenizer's
	// marginal cost per prompt token in vLLM's tokenizer thread.
	TokenizeUSPerPromptToken = 1.3
	// ProfileSerialMSPerRequest: the API server's serial work per request
	// besides the per-token part (request parsing, chat template, the
	// tokenizer call itself).
	ProfileSerialMSPerRequest = 1.2
	// ProfileHandoffMS: vLLM V1's hand-off from the API server process to
	// the engine-core process (msgpack and a ZMQ IPC socket).
	ProfileHandoffMS = 0.1
	// ProfileDetokenizeUSPerOutputToken: incremental detokenization of one
	// output token.
	ProfileDetokenizeUSPerOutputToken = 30
)

// Profiles are the front ends --frontend names.
var Profiles = []Profile{
	{Name: "vllm-v1", Description: "vLLM V1 (0.8+): API server process tokenizes and detokenizes beside the engine-core process",
		Server: Config{SerialMSPerRequest: ProfileSerialMSPerRequest, SerialUSPerPromptToken: TokenizeUSPerPromptToken,
			HandoffMS: ProfileHandoffMS, DetokenizeUSPerOutputToken: ProfileDetokenizeUSPerOutputToken}},
	{Name: "vllm-v0", Description: "vLLM V0: one process; the engine loop detokenizes every sequence each step",
		Server: Config{SerialMSPerRequest: ProfileSerialMSPerRequest, SerialUSPerPromptToken: TokenizeUSPerPromptToken,
			DetokenizeUSPerOutputToken: ProfileDetokenizeUSPerOutputToken, DetokenizeInEngine: true}},
}

// Lookup finds a profile by name, case-insensitively.
func Lookup(name string) (Profile, bool) {
	for _, p := range Profiles {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Profile{}, false
}

// Names lists the profiles' names.
func Names() []string {
	n := make([]string, len(Profiles))
	for i, p := range Profiles {
		n[i] = p.Name
	}
	return n
}

// Resolved returns the configuration with its Frontend profile filling
// every field left at zero or at Default's value (a built-in default
// is not a choice the profile should keep).
func (c Config) Resolved() (Config, error) {
	if c.Frontend == "" || strings.EqualFold(c.Frontend, "none") {
		return c, nil
	}
	p, ok := Lookup(c.Frontend)
	if !ok {
		return c, fmt.Errorf("server.frontend: unknown profile %q; valid: %s, none", c.Frontend, strings.Join(Names(), ", "))
	}
	f, d := p.Server, Default()
	fill := func(v *float64, from, def float64) {
		if *v == 0 || *v == def {
			*v = from
		}
	}
	fill(&c.RequestOverheadMS, f.RequestOverheadMS, d.RequestOverheadMS)
	fill(&c.SerialMSPerRequest, f.SerialMSPerRequest, d.SerialMSPerRequest)
	fill(&c.SerialUSPerPromptToken, f.SerialUSPerPromptToken, d.SerialUSPerPromptToken)
	fill(&c.HandoffMS, f.HandoffMS, d.HandoffMS)
	fill(&c.DetokenizeUSPerOutputToken, f.DetokenizeUSPerOutputToken, d.DetokenizeUSPerOutputToken)
	c.DetokenizeInEngine = c.DetokenizeInEngine || f.DetokenizeInEngine
	return c, nil
}

// EngineDetokenization lengthens every step of M by NS per sequence in it:
// vLLM V0's engine loop detokenizing each sequence's new token before the
// next step (Config.DetokenizeInEngine). It allocates nothing.
type EngineDetokenization struct {
	M  cost.Model
	NS float64 // per sequence of a step
}

func (d EngineDetokenization) StepNS(b *cost.Batch) int64 {
	t := d.M.StepNS(b)
	if t == 0 {
		return 0
	}
	return t + int64(float64(b.Seqs())*d.NS+0.5)
}

func (d EngineDetokenization) Name() string {
	return d.M.Name() + " + detokenization in the engine loop"
}

// DefaultSerialUSPerPromptToken is the default serial tokenization cost, µs
// per prompt token: a Hugging Face tokenizer with a chat template in vLLM's
// single-thread tokenizer executor, 10.1–10.7 µs per token once warm
// (tenstorrent/tt-inference-server#2173; vllm-project/vllm#25301).
const DefaultSerialUSPerPromptToken = 10

// Default is the front end of a vLLM-V1-like server: serial
// tokenization at DefaultSerialUSPerPromptToken; no fixed latency and no
// per-request serial work, which no published measurement separates from
// the rest of TTFT (calibrate fits the fixed part to a measured run).
func Default() Config {
	return Config{SerialUSPerPromptToken: DefaultSerialUSPerPromptToken}
}

// On reports whether the front end delays arrivals at the scheduler.
func (c Config) On() bool {
	return c.RequestOverheadMS > 0 || c.SerialMSPerRequest > 0 || c.SerialUSPerPromptToken > 0 || c.HandoffMS > 0
}

// Validate reports the first field with an impossible value.
func (c Config) Validate() error {
	switch {
	case !(c.RequestOverheadMS >= 0 && c.RequestOverheadMS <= 60000):
		return fmt.Errorf("server.request_overhead_ms: must be in [0, 60000] ms, got %g", c.RequestOverheadMS)
	case !(c.SerialMSPerRequest >= 0 && c.SerialMSPerRequest <= 60000):
		return fmt.Errorf("server.serial_ms_per_request: must be in [0, 60000] ms, got %g", c.SerialMSPerRequest)
	case !(c.SerialUSPerPromptToken >= 0 && c.SerialUSPerPromptToken <= 10000):
		return fmt.Errorf("server.serial_us_per_prompt_token: must be in [0, 10000] µs per token, got %g", c.SerialUSPerPromptToken)
	case !(c.HandoffMS >= 0 && c.HandoffMS <= 60000):
		return fmt.Errorf("server.handoff_ms: must be in [0, 60000] ms, got %g", c.HandoffMS)
	case !(c.DetokenizeUSPerOutputToken >= 0 && c.DetokenizeUSPerOutputToken <= 10000):
		return fmt.Errorf("server.detokenize_us_per_output_token: must be in [0, 10000] µs per token, got %g", c.DetokenizeUSPerOutputToken)
	}
	_, err := c.Resolved()
	return err
}

// frontEnd delays each request of an open-loop source by the front end:
// k serial stages (one per replica) followed by a fixed latency. Request i
// takes the stage that frees first; its serial work s_i = per request +
// per token × prompt tokens ends at max(arrival_i, free) + s_i, and it is
// ready a fixed latency later. Ready times are kept non-decreasing, as the
// engine's arrival events require: with one stage FIFO gives that; with
// several, a short request finishing before a longer one ahead of it waits
// for it (at most one request's serial work).
type frontEnd struct {
	src       workloads.Source
	fixed     int64   // ns
	perReq    int64   // ns
	perTokNS  float64 // ns per prompt token
	free      []int64 // when each serial stage is next free, ns
	lastReady int64
}

// New puts src behind the front end c with one serial stage per replica
// (stages); a source the front end leaves alone comes back as it is.
func New(src workloads.Source, c Config, stages int) workloads.Source {
	if !c.On() {
		return src
	}
	f := &frontEnd{src: src, fixed: int64(ms(c.RequestOverheadMS + c.HandoffMS)), perReq: int64(ms(c.SerialMSPerRequest)),
		perTokNS: c.SerialUSPerPromptToken * 1000, free: make([]int64, max(stages, 1))}
	if capped, ok := src.(*workloads.InFlight); ok {
		// A client's cap on requests in flight decides when each is sent;
		// the server's front end then takes it as any other.
		return &frontedInFlight{src: capped, fe: f}
	}
	if _, reactive := src.(workloads.Reactive); reactive {
		// A closed loop's arrivals follow the ends; its think time already
		// stands for what happens between a user's requests.
		return src
	}
	return f
}

func (f *frontEnd) Next(r *workloads.Request) bool {
	if !f.src.Next(r) {
		return false
	}
	f.stage(r)
	return true
}

// stage passes r through the front end: it sets r.Ready.
func (f *frontEnd) stage(r *workloads.Request) {
	k := 0
	for i, t := range f.free {
		if t < f.free[k] {
			k = i
		}
	}
	f.free[k] = max(f.free[k], r.Arrival) + f.perReq + int64(f.perTokNS*float64(r.InputTokens))
	f.lastReady = max(f.lastReady, f.free[k]+f.fixed)
	r.Ready = f.lastReady
}

// Err passes the source's error on.
func (f *frontEnd) Err() error { return workloads.Err(f.src) }

// Skipped passes on how many malformed trace rows the source skipped, so
// that the run's skipped_rows counts them behind the front end too.
func (f *frontEnd) Skipped() int { return workloads.SkippedRows(f.src) }

// ms is a duration in milliseconds as nanoseconds, rounded as sim.FromMS
// rounds it.
func ms(v float64) float64 { return v*1e6 + 0.5 }

// frontedInFlight is the front end behind a client's in-flight cap
// (workloads.InFlight): the cap decides when a request is sent (its
// Arrival), the front end when it reaches the scheduler (Ready). It holds
// the next request once a slot is free, when its send time is final, and
// offers it at its Ready time.
type frontedInFlight struct {
	src  *workloads.InFlight
	fe   *frontEnd
	next workloads.Request
	has  bool
}

var _ workloads.Reactive = (*frontedInFlight)(nil)

func (f *frontedInFlight) NextAt() (int64, bool) {
	if !f.has {
		if !f.src.Next(&f.next) {
			return 0, false
		}
		f.fe.stage(&f.next)
		f.has = true
	}
	return max(f.next.Arrival, f.next.Ready), true
}

func (f *frontedInFlight) Next(r *workloads.Request) bool {
	if _, ok := f.NextAt(); !ok {
		return false
	}
	*r, f.has = f.next, false
	return true
}

func (f *frontedInFlight) Done(id int, at int64) { f.src.Done(id, at) }
func (f *frontedInFlight) Exhausted() bool       { return !f.has && f.src.Exhausted() }
func (f *frontedInFlight) Err() error            { return f.src.Err() }
func (f *frontedInFlight) Skipped() int          { return f.src.Skipped() }
