package delivery

import (
	"fmt"
	"strings"

	"github.com/itlsim/itlsim/sim/cost"
)

// Config is the scenario's delivery section: the path a stream takes from
// the server's output to the user's screen, and the mitigations. Every
// mechanism is off in DefaultConfig. Times are milliseconds (float) in the
// configuration and integer nanoseconds everywhere else.
type Config struct {
	// Network is the transport between server and client: latency, jitter,
	// packet loss and connection drops.
	Network Network `yaml:"network" json:"network"`
	// Coalescing is a proxy or TCP send buffer between server and client
	// that merges chunks.
	Coalescing Coalescing `yaml:"coalescing" json:"coalescing"`
	// Render is the client's renderer.
	Render Render `yaml:"render" json:"render"`
	// Flush is the server's accept-then-flush mitigation.
	Flush Flush `yaml:"flush" json:"flush"`
	// Smoothing is the client smoothing buffer.
	Smoothing Smoothing `yaml:"smoothing" json:"smoothing"`
	// Failover is mid-stream failover to a backup replica.
	Failover Failover `yaml:"failover" json:"failover"`
}

// Network is the transport. A profile fills every field left at its zero
// value; fields given beside it override it. A zero cannot override a
// profile's value: to switch a mechanism off, leave the profile out and
// give the fields (or, for a distribution, write "fixed:0").
type Network struct {
	// Profile names a preset: datacenter, broadband, mobile-4g,
	// flaky-wifi (see Profiles). Default "" (none).
	Profile string `yaml:"profile" json:"profile"`
	// BaseMS is the one-way latency floor from server to client, ms. ≥ 0;
	// default 0.
	BaseMS float64 `yaml:"base_ms" json:"base_ms"`
	// JitterMS is the extra one-way delay drawn for every chunk sent, ms
	// (a distribution: exp:2, lognormal:8,10, …). Chunks stay in order: a
	// late chunk holds back the ones behind it. Default none.
	JitterMS Dist `yaml:"jitter_ms" json:"jitter_ms"`
	// Loss is the probability that one transmission of a chunk is lost, in
	// [0, 0.5]. Default 0.
	Loss float64 `yaml:"loss" json:"loss"`
	// RTOMS is the retransmission timeout after a loss, ms; it doubles on
	// each repeated loss of the same chunk, up to 120 s (Linux TCP_RTO_MAX),
	// and a lost chunk holds back every later one. In [1, 60000]; default
	// 200 (Linux TCP_RTO_MIN, HZ/5).
	RTOMS float64 `yaml:"rto_ms" json:"rto_ms"`
	// DropsPerS is the rate of connection drops per stream-second (a
	// Poisson process from the request's arrival to its last delivered
	// chunk). In [0, 10]; default 0.
	DropsPerS float64 `yaml:"drops_per_s" json:"drops_per_s"`
	// ReconnectMS is the time from a drop until the connection is back and
	// the stream resumes, ms (a distribution). Default none (0).
	ReconnectMS Dist `yaml:"reconnect_ms" json:"reconnect_ms"`
	// OnDrop is what a drop does: resume (default: reconnect after
	// ReconnectMS and re-send every chunk not yet delivered) or fail (the
	// stream ends at the drop with what was delivered, reported as failed).
	OnDrop string `yaml:"on_drop" json:"on_drop"`
}

// On-drop behaviours.
const (
	OnDropResume = "resume"
	OnDropFail   = "fail"
)

// Coalescing is a buffer between server and client that merges chunks: a
// reverse proxy buffering the response, or TCP's Nagle algorithm holding
// small segments until the previous one is acknowledged. Tokens released
// together become one chunk. A preset fills the fields left at zero, as a
// network profile does.
type Coalescing struct {
	// Preset names a preset: nagle or proxy-buffer (see
	// CoalescingPresets). Default "" (none).
	Preset string `yaml:"preset" json:"preset"`
	// Mode is none (default), buffer (release when SizeBytes or SizeTokens
	// are pending, or FlushMS after the first pending byte, or at the end
	// of the response) or nagle (send at once when nothing is in flight;
	// otherwise hold until the previous segment's ACK returns, one round
	// trip of 2 × network.base_ms plus AckDelayMS after it was sent, or
	// until SizeBytes are pending).
	Mode string `yaml:"mode" json:"mode"`
	// SizeBytes releases the buffer when this many bytes are pending (a
	// proxy buffer's size; Nagle's maximum segment size). ≥ 0; 0 = no byte
	// threshold.
	SizeBytes int `yaml:"size_bytes" json:"size_bytes"`
	// SizeTokens releases the buffer when this many tokens are pending.
	// ≥ 0; 0 = no token threshold.
	SizeTokens int `yaml:"size_tokens" json:"size_tokens"`
	// FlushMS (buffer mode) releases the buffer at most this long after its
	// first pending byte, ms. ≥ 0; 0 = no timer.
	FlushMS float64 `yaml:"flush_ms" json:"flush_ms"`
	// AckDelayMS (nagle mode) is the client's delayed-ACK timer, ms.
	// Default 40 (Linux TCP_DELACK_MIN, HZ/25).
	AckDelayMS float64 `yaml:"ack_delay_ms" json:"ack_delay_ms"`
	// EventBytes is the framing of one server chunk on the wire, bytes.
	// Default 200 (an OpenAI-style chat.completion.chunk server-sent event
	// carries about 200 bytes of JSON around its text; an assumption).
	EventBytes int `yaml:"event_bytes" json:"event_bytes"`
	// TokenBytes is the text of one token, bytes. Default 4 (about four
	// characters of English per token, OpenAI's rule of thumb).
	TokenBytes int `yaml:"token_bytes" json:"token_bytes"`
}

// Coalescing modes.
const (
	ModeNone   = "none"
	ModeBuffer = "buffer"
	ModeNagle  = "nagle"
)

// Render is the client's renderer.
type Render struct {
	// FrameMS is the display's frame period, ms: a chunk becomes visible at
	// the next frame boundary (16.7 for 60 Hz), with a phase drawn per
	// stream. 0 (off: visible on arrival, the default) or in [1, 1000].
	FrameMS float64 `yaml:"frame_ms" json:"frame_ms"`
}

// Flush is the server's accept-then-flush mitigation: the server holds the
// tokens it produces and sends them every WindowMS, so the client sees a
// regular cadence. The first chunk goes out at once (TTFT is unchanged);
// later flushes fall at first chunk + k × WindowMS and carry every token
// produced up to that instant.
type Flush struct {
	// WindowMS is the flush period, ms. 0 (off, the default) or in [1, 10000].
	WindowMS float64 `yaml:"window_ms" json:"window_ms"`
}

// Smoothing is the client smoothing buffer. It holds the stream's first
// tokens for InitialMS (or until InitialTokens have arrived, whichever is
// first), then releases tokens every CadenceMS at a rate that follows the
// stream's arrival rate and corrects toward a buffer holding DepthMS of
// tokens, so that the buffer neither starves nor grows without bound (see
// the package documentation for the controller).
type Smoothing struct {
	// CadenceMS is the release period, ms (33 ≈ one release per two 60 Hz
	// frames). 0 (off, the default) or in [1, 10000].
	CadenceMS float64 `yaml:"cadence_ms" json:"cadence_ms"`
	// DepthMS is the buffer's target depth, ms of the stream's tokens: a
	// pause shorter than about DepthMS is absorbed. In (0, 60000] when
	// smoothing is on; default 250.
	DepthMS float64 `yaml:"depth_ms" json:"depth_ms"`
	// InitialMS is the hold before the first release, ms; 0 holds DepthMS.
	// In [0, 60000].
	InitialMS float64 `yaml:"initial_ms" json:"initial_ms"`
	// InitialTokens starts the releases as soon as this many tokens have
	// arrived, if that comes before InitialMS. ≥ 0; 0 = unused.
	InitialTokens int `yaml:"initial_tokens" json:"initial_tokens"`
}

// Failover is mid-stream failover: a watchdog in front of the primary
// replica cancels a stream that has shown nothing for WatchdogMS and
// re-issues the rest of the generation to Backup, with the prompt and the
// text generated so far as its context. A stream fails over at most once.
type Failover struct {
	// WatchdogMS is how long a stream may show nothing (from its arrival,
	// or from its last chunk) before it fails over, ms. In [0, 3600000];
	// default 0 (off).
	WatchdogMS float64 `yaml:"watchdog_ms" json:"watchdog_ms"`
	// Backup is the replica or provider that finishes failed-over streams.
	Backup Backup `yaml:"backup" json:"backup"`
	// KeepPrimary leaves a failed-over stream running on the primary, as if
	// the cancel never reached it. By default (false) the simulator aborts
	// it there when the watchdog fires, as vLLM aborts a request whose
	// client went away, and its KV blocks and batch slot go to the other
	// streams. Keeping it costs the primary that capacity, but lets each
	// failover's saving be measured against the primary's own finish
	// (Result.FailoverSaved).
	KeepPrimary bool `yaml:"keep_primary" json:"keep_primary"`
	// PrimaryModel is the model streams start on; a failover after the
	// first token to a different model is a coherence break. The engine
	// fills it from the scenario's model; empty counts as different from
	// any backup.
	PrimaryModel string `yaml:"-" json:"-"`
}

// Backup describes the failover target. Its prefill and decode steps are
// priced by sim/cost's roofline (default efficiencies) for its model, GPU
// and tensor-parallel degree, in a batch of Batch other sequences.
type Backup struct {
	// Model is a model preset (itlsim presets). Default llama-3.1-8b.
	Model string `yaml:"model" json:"model"`
	// GPU is a GPU preset. Default h100-sxm-80gb.
	GPU string `yaml:"gpu" json:"gpu"`
	// TP is the tensor-parallel degree. In [1, 64]; default 1.
	TP int `yaml:"tp" json:"tp"`
	// Batch is the backup's load: sequences decoding beside the failed-over
	// stream in every step. In [0, 4096]; default 32.
	Batch int `yaml:"batch" json:"batch"`
	// ContextTokens is the mean context of those sequences, tokens. In
	// [0, 1048576]; default 1024.
	ContextTokens int `yaml:"context_tokens" json:"context_tokens"`
	// MaxNumBatchedTokens is the backup's token budget per step: the
	// re-issued prompt is prefilled in chunks of this minus Batch tokens.
	// Greater than Batch, at most 1048576; default 8192.
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"`
	// TTFTOverheadMS is the time before the backup starts the prefill:
	// connecting, queueing, admission, ms. In [0, 600000]; default 100
	// (an assumption).
	TTFTOverheadMS float64 `yaml:"ttft_overhead_ms" json:"ttft_overhead_ms"`
}

// DefaultConfig has every mechanism off, with the values each uses once
// turned on (RTO, delayed ACK, wire sizes, smoothing depth, the backup).
func DefaultConfig() Config {
	return Config{
		Network:    Network{RTOMS: 200},
		Coalescing: Coalescing{AckDelayMS: 40, EventBytes: 200, TokenBytes: 4},
		Smoothing:  Smoothing{DepthMS: 250},
		Failover: Failover{Backup: Backup{Model: "llama-3.1-8b", GPU: "h100-sxm-80gb", TP: 1, Batch: 32,
			ContextTokens: 1024, MaxNumBatchedTokens: 8192, TTFTOverheadMS: 100}},
	}
}

// Resolved returns the configuration with the network profile and the
// coalescing preset applied to every field left at zero (the form to print
// as the resolved scenario).
func (c Config) Resolved() (Config, error) {
	if p := c.Network.Profile; p != "" && !strings.EqualFold(p, ModeNone) {
		prof, ok := LookupProfile(p)
		if !ok {
			return c, fmt.Errorf("delivery.network.profile: unknown profile %q; valid: %s", p, strings.Join(ProfileNames(), ", "))
		}
		c.Network = fillNetwork(c.Network, prof.Network)
	}
	if p := c.Coalescing.Preset; p != "" && !strings.EqualFold(p, ModeNone) {
		pre, ok := LookupCoalescing(p)
		if !ok {
			return c, fmt.Errorf("delivery.coalescing.preset: unknown preset %q; valid: %s", p, strings.Join(CoalescingNames(), ", "))
		}
		c.Coalescing = fillCoalescing(c.Coalescing, pre.Coalescing)
	}
	return c, nil
}

func fillNetwork(n, p Network) Network {
	if n.BaseMS == 0 {
		n.BaseMS = p.BaseMS
	}
	if n.JitterMS.IsZero() {
		n.JitterMS = p.JitterMS
	}
	if n.Loss == 0 {
		n.Loss = p.Loss
	}
	if n.RTOMS == 0 {
		n.RTOMS = p.RTOMS
	}
	if n.DropsPerS == 0 {
		n.DropsPerS = p.DropsPerS
	}
	if n.ReconnectMS.IsZero() {
		n.ReconnectMS = p.ReconnectMS
	}
	if n.OnDrop == "" {
		n.OnDrop = p.OnDrop
	}
	return n
}

func fillCoalescing(c, p Coalescing) Coalescing {
	if c.Mode == "" || c.Mode == ModeNone {
		c.Mode = p.Mode
	}
	if c.SizeBytes == 0 {
		c.SizeBytes = p.SizeBytes
	}
	if c.SizeTokens == 0 {
		c.SizeTokens = p.SizeTokens
	}
	if c.FlushMS == 0 {
		c.FlushMS = p.FlushMS
	}
	if c.AckDelayMS == 0 {
		c.AckDelayMS = p.AckDelayMS
	}
	if c.EventBytes == 0 {
		c.EventBytes = p.EventBytes
	}
	if c.TokenBytes == 0 {
		c.TokenBytes = p.TokenBytes
	}
	return c
}

// Enabled reports whether any mechanism is on (after the profile and
// preset are applied). A disabled path delivers every server chunk as is.
func (c Config) Enabled() bool {
	r, err := c.Resolved()
	if err != nil {
		return true // Validate reports it
	}
	n := r.Network
	return n.BaseMS > 0 || !n.JitterMS.IsZero() || n.Loss > 0 || n.DropsPerS > 0 ||
		(r.Coalescing.Mode != "" && r.Coalescing.Mode != ModeNone) ||
		r.Render.FrameMS > 0 || r.Flush.WindowMS > 0 || r.Smoothing.CadenceMS > 0 || r.Failover.WatchdogMS > 0
}

// inRange reports whether v is a number in [lo, hi] (false for NaN).
func inRange(v, lo, hi float64) bool { return v >= lo && v <= hi }

// offOrInRange reports whether v is 0 (a mechanism turned off) or in [lo, hi].
func offOrInRange(v, lo, hi float64) bool { return v == 0 || inRange(v, lo, hi) }

// Validate reports the first field with an impossible value, naming it as
// "delivery.section.field"; the network profile and coalescing preset are
// applied first, so a profile's values are checked too.
func (c Config) Validate() error {
	r, err := c.Resolved()
	if err != nil {
		return err
	}
	n := r.Network
	switch {
	case !inRange(n.BaseMS, 0, 60000):
		return fmt.Errorf("delivery.network.base_ms: must be in [0, 60000] ms, got %g", n.BaseMS)
	case !inRange(n.Loss, 0, 0.5):
		return fmt.Errorf("delivery.network.loss: must be a probability in [0, 0.5], got %g", n.Loss)
	case !inRange(n.RTOMS, 1, 60000):
		return fmt.Errorf("delivery.network.rto_ms: must be in [1, 60000] ms, got %g", n.RTOMS)
	case !inRange(n.DropsPerS, 0, 10):
		return fmt.Errorf("delivery.network.drops_per_s: must be in [0, 10] drops per stream-second, got %g", n.DropsPerS)
	case n.OnDrop != "" && n.OnDrop != OnDropResume && n.OnDrop != OnDropFail:
		return fmt.Errorf("delivery.network.on_drop: must be %s or %s, got %q", OnDropResume, OnDropFail, n.OnDrop)
	}
	k := r.Coalescing
	switch {
	case k.Mode != "" && k.Mode != ModeNone && k.Mode != ModeBuffer && k.Mode != ModeNagle:
		return fmt.Errorf("delivery.coalescing.mode: must be %s, %s or %s, got %q", ModeNone, ModeBuffer, ModeNagle, k.Mode)
	case k.SizeBytes < 0 || k.SizeBytes > 1<<30:
		return fmt.Errorf("delivery.coalescing.size_bytes: must be in [0, %d] bytes, got %d", 1<<30, k.SizeBytes)
	case k.SizeTokens < 0 || k.SizeTokens > 1<<30:
		return fmt.Errorf("delivery.coalescing.size_tokens: must be in [0, %d] tokens, got %d", 1<<30, k.SizeTokens)
	case !inRange(k.FlushMS, 0, 60000):
		return fmt.Errorf("delivery.coalescing.flush_ms: must be in [0, 60000] ms, got %g", k.FlushMS)
	case !inRange(k.AckDelayMS, 0, 1000):
		return fmt.Errorf("delivery.coalescing.ack_delay_ms: must be in [0, 1000] ms, got %g", k.AckDelayMS)
	case k.EventBytes < 0 || k.EventBytes > 1<<20:
		return fmt.Errorf("delivery.coalescing.event_bytes: must be in [0, %d] bytes, got %d", 1<<20, k.EventBytes)
	case k.TokenBytes < 0 || k.TokenBytes > 1<<10:
		return fmt.Errorf("delivery.coalescing.token_bytes: must be in [0, %d] bytes, got %d", 1<<10, k.TokenBytes)
	case !offOrInRange(r.Render.FrameMS, 1, 1000):
		return fmt.Errorf("delivery.render.frame_ms: must be 0 (off) or in [1, 1000] ms, got %g", r.Render.FrameMS)
	case !offOrInRange(r.Flush.WindowMS, 1, 10000):
		return fmt.Errorf("delivery.flush.window_ms: must be 0 (off) or in [1, 10000] ms, got %g", r.Flush.WindowMS)
	}
	s := r.Smoothing
	switch {
	case !offOrInRange(s.CadenceMS, 1, 10000):
		// The buffer works tick by tick: a cadence far below a display
		// frame means nothing and costs a tick per microsecond.
		return fmt.Errorf("delivery.smoothing.cadence_ms: must be 0 (off) or in [1, 10000] ms, got %g", s.CadenceMS)
	case !inRange(s.InitialMS, 0, 60000):
		return fmt.Errorf("delivery.smoothing.initial_ms: must be in [0, 60000] ms, got %g", s.InitialMS)
	case s.InitialTokens < 0 || s.InitialTokens > 1<<20:
		return fmt.Errorf("delivery.smoothing.initial_tokens: must be in [0, %d], got %d", 1<<20, s.InitialTokens)
	case s.CadenceMS > 0 && !(s.DepthMS > 0 && s.DepthMS <= 60000):
		return fmt.Errorf("delivery.smoothing.depth_ms: must be in (0, 60000] ms when smoothing is on, got %g", s.DepthMS)
	}
	f := r.Failover
	b := f.Backup
	switch {
	case !inRange(f.WatchdogMS, 0, 3.6e6):
		return fmt.Errorf("delivery.failover.watchdog_ms: must be in [0, 3600000] ms, got %g", f.WatchdogMS)
	case b.TP < 1 || b.TP > 64:
		return fmt.Errorf("delivery.failover.backup.tp: must be in [1, 64], got %d", b.TP)
	case b.Batch < 0 || b.Batch > 4096:
		return fmt.Errorf("delivery.failover.backup.batch: must be in [0, 4096] sequences, got %d", b.Batch)
	case b.ContextTokens < 0 || b.ContextTokens > 1<<20:
		return fmt.Errorf("delivery.failover.backup.context_tokens: must be in [0, %d], got %d", 1<<20, b.ContextTokens)
	case b.MaxNumBatchedTokens <= b.Batch || b.MaxNumBatchedTokens > 1<<20:
		return fmt.Errorf("delivery.failover.backup.max_num_batched_tokens: must be greater than backup.batch (%d) and at most %d, got %d",
			b.Batch, 1<<20, b.MaxNumBatchedTokens)
	case !inRange(b.TTFTOverheadMS, 0, 600000):
		return fmt.Errorf("delivery.failover.backup.ttft_overhead_ms: must be in [0, 600000] ms, got %g", b.TTFTOverheadMS)
	}
	if f.WatchdogMS > 0 {
		if _, err := newBackup(b); err != nil {
			return err
		}
	}
	return nil
}

// newBackup builds the backup's step model, checking that its model fits.
func newBackup(b Backup) (*cost.Roofline, error) {
	m, ok := cost.LookupModel(b.Model)
	if !ok {
		return nil, fmt.Errorf("delivery.failover.backup.model: unknown model preset %q; valid: %s", b.Model, strings.Join(cost.ModelNames(), ", "))
	}
	g, ok := cost.LookupGPU(b.GPU)
	if !ok {
		return nil, fmt.Errorf("delivery.failover.backup.gpu: unknown GPU preset %q; valid: %s", b.GPU, strings.Join(cost.GPUNames(), ", "))
	}
	if _, err := cost.KVBlocks(m, g, b.TP, 16, 0.9, cost.DefaultActivationReserve(m, b.MaxNumBatchedTokens, b.Batch, b.TP)); err != nil {
		return nil, fmt.Errorf("delivery.failover.backup: %w", err)
	}
	r, err := cost.NewRoofline(m, g, b.TP, cost.DefaultRoofline())
	if err != nil {
		return nil, fmt.Errorf("delivery.failover.backup: %w", err)
	}
	return r, nil
}
