package sim

import (
	"fmt"

	"github.com/itlsim/itlsim/workloads"
)

// ServerConfig models the serving front end a request passes before the
// scheduler sees it (vLLM's OpenAI API server: HTTP handling, request
// validation, tokenization, the hand-off to the engine core), so that TTFT
// is not optimistic by that overhead. DefaultServer holds the serial
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
type ServerConfig struct {
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
}

// DefaultSerialUSPerPromptToken is the default serial tokenization cost, µs
// per prompt token: a Hugging Face tokenizer with a chat template in vLLM's
// single-thread tokenizer executor, 10.1–10.7 µs per token once warm
// (tenstorrent/tt-inference-server#2173; vllm-project/vllm#25301).
const DefaultSerialUSPerPromptToken = 10

// DefaultServer is the front end of a vLLM-V1-like server: serial
// tokenization at DefaultSerialUSPerPromptToken; no fixed latency and no
// per-request serial work, which no published measurement separates from
// the rest of TTFT (calibrate fits the fixed part to a measured run).
func DefaultServer() ServerConfig {
	return ServerConfig{SerialUSPerPromptToken: DefaultSerialUSPerPromptToken}
}

// On reports whether the front end adds any delay.
func (c ServerConfig) On() bool {
	return c.RequestOverheadMS > 0 || c.SerialMSPerRequest > 0 || c.SerialUSPerPromptToken > 0
}

// Validate reports the first field with an impossible value.
func (c ServerConfig) Validate() error {
	switch {
	case !(c.RequestOverheadMS >= 0 && c.RequestOverheadMS <= 60000):
		return fmt.Errorf("server.request_overhead_ms: must be in [0, 60000] ms, got %g", c.RequestOverheadMS)
	case !(c.SerialMSPerRequest >= 0 && c.SerialMSPerRequest <= 60000):
		return fmt.Errorf("server.serial_ms_per_request: must be in [0, 60000] ms, got %g", c.SerialMSPerRequest)
	case !(c.SerialUSPerPromptToken >= 0 && c.SerialUSPerPromptToken <= 10000):
		return fmt.Errorf("server.serial_us_per_prompt_token: must be in [0, 10000] µs per token, got %g", c.SerialUSPerPromptToken)
	}
	return nil
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

func newFrontEnd(src workloads.Source, c ServerConfig, stages int) workloads.Source {
	if !c.On() {
		return src
	}
	f := &frontEnd{src: src, fixed: int64(FromMS(c.RequestOverheadMS)), perReq: int64(FromMS(c.SerialMSPerRequest)),
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
