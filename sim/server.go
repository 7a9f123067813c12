package sim

import (
	"fmt"

	"github.com/itlsim/itlsim/workloads"
)

// ServerConfig models the serving front end a request passes before the
// scheduler sees it (vLLM's OpenAI API server: HTTP handling, request
// validation, tokenization, the hand-off to the engine core), so that TTFT
// at light load is not optimistic by that overhead. Both fields default to
// 0 (off): `itlsim calibrate` fits them to a measured run.
type ServerConfig struct {
	// RequestOverheadMS is the fixed time, in milliseconds, from a request's
	// arrival to its reaching the scheduler, paid by every request in
	// parallel (no queueing).
	RequestOverheadMS float64 `yaml:"request_overhead_ms" json:"request_overhead_ms"`
	// SerialMSPerRequest is front-end work done one request at a time, in
	// milliseconds: requests that arrive together queue for it (vLLM
	// tokenizes prompts on a single thread, vllm-project/vllm#25301, and
	// handles requests on one asyncio loop), which spreads a burst's arrivals
	// at the scheduler.
	SerialMSPerRequest float64 `yaml:"serial_ms_per_request" json:"serial_ms_per_request"`
}

// On reports whether the front end adds any delay.
func (c ServerConfig) On() bool { return c.RequestOverheadMS > 0 || c.SerialMSPerRequest > 0 }

// Validate reports the first field with an impossible value.
func (c ServerConfig) Validate() error {
	switch {
	case !(c.RequestOverheadMS >= 0 && c.RequestOverheadMS <= 60000):
		return fmt.Errorf("server.request_overhead_ms: must be in [0, 60000] ms, got %g", c.RequestOverheadMS)
	case !(c.SerialMSPerRequest >= 0 && c.SerialMSPerRequest <= 60000):
		return fmt.Errorf("server.serial_ms_per_request: must be in [0, 60000] ms, got %g", c.SerialMSPerRequest)
	}
	return nil
}

// frontEnd delays each request of an open-loop source by the front end:
// request i is ready at max(arrival_i, ready_{i−1} − fixed) + serial + fixed,
// a single FIFO server followed by a fixed latency. Ready times are
// non-decreasing, as the engine's arrival events require.
type frontEnd struct {
	src           workloads.Source
	fixed, serial int64 // ns
	free          int64 // when the serial stage is next free
}

func newFrontEnd(src workloads.Source, c ServerConfig) workloads.Source {
	if !c.On() {
		return src
	}
	if _, reactive := src.(workloads.Reactive); reactive {
		// A closed loop's arrivals follow the ends; its think time already
		// stands for what happens between a user's requests.
		return src
	}
	return &frontEnd{src: src, fixed: int64(FromMS(c.RequestOverheadMS)), serial: int64(FromMS(c.SerialMSPerRequest))}
}

func (f *frontEnd) Next(r *workloads.Request) bool {
	if !f.src.Next(r) {
		return false
	}
	f.free = max(f.free, r.Arrival) + f.serial
	r.Ready = f.free + f.fixed
	return true
}

// Err passes the source's error on.
func (f *frontEnd) Err() error { return workloads.Err(f.src) }
