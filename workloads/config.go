package workloads

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// Config describes a workload: when requests arrive and how long their
// prompts and outputs are, generated or read from a trace, and the
// transformations applied to either. A scenario file's "workload:" section
// maps onto it one to one.
//
// A generated workload is an arrival process (Arrival, Rate, CV or Shape,
// RateCurve) bounded by Requests or DurationS, with lengths from InputLen
// and OutputLen or from LengthsFile. A trace (Trace, Format) replaces all
// of that when it brings its own arrival times (every format but lengths):
// it replays from its earliest request, at time 0, to its last. The
// transformations (WindowS, Sample, CapTokens or CapToContext, and
// TimeScale or TargetRate) apply to any source.
type Config struct {
	// Arrival names the arrival process, one of ArrivalNames(): "poisson"
	// (exponential gaps, the default; empty means poisson), "constant"
	// (evenly spaced), "gamma" or "weibull" (gaps of that distribution,
	// with CV or Shape). Whatever the process, the first request arrives
	// at time 0, as vLLM's benchmark_serving sends it, and the mean rate is
	// Rate.
	Arrival string `yaml:"arrival" json:"arrival"`
	// Rate is the mean arrival rate in requests per second; > 0. A
	// RateCurve multiplies it over time.
	Rate float64 `yaml:"rate" json:"rate"`
	// Requests is how many requests to generate. 0 means the workload is
	// bounded by DurationS instead; setting both is an error (one would be
	// ignored). A scenario file or a flag that sets duration_s and not
	// requests sets requests to 0. A trace with its own arrival times
	// ignores both.
	Requests int `yaml:"requests" json:"requests"`
	// DurationS is the arrival window in seconds when Requests is 0: every
	// request arriving before it is generated.
	DurationS float64 `yaml:"duration_s" json:"duration_s"`
	// CV is the coefficient of variation of the inter-arrival gaps of gamma
	// and weibull arrivals, in [0.02, 10]: 1 is as bursty as Poisson, above
	// 1 burstier. Set CV or Shape for those processes and neither for the
	// others.
	CV float64 `yaml:"cv,omitempty" json:"cv,omitempty"`
	// Shape is the shape parameter of the gap distribution instead of CV:
	// gamma's k in [0.01, 10000] (CV = 1/√k), Weibull's c in [0.1, 100]
	// (c < 1 bursty, 1 Poisson).
	Shape float64 `yaml:"shape,omitempty" json:"shape,omitempty"`
	// RateCurve modulates the rate over time, as "KIND:PARAMS" (see
	// CurveKinds): "onoff:ON_S,OFF_S" bursts, "sine:PERIOD_S,AMPLITUDE[,PHASE_S]"
	// a sinusoid, "points:T=M,..." or "cycle:T=M,..." a piecewise-linear
	// multiplier of Rate at times T in seconds (cycle repeats it). Empty: a
	// constant rate.
	RateCurve string `yaml:"rate_curve,omitempty" json:"rate_curve,omitempty"`
	// InputLen is the distribution of prompt lengths, in tokens. Required
	// unless LengthsFile or Trace is set.
	// Users is the closed-loop arrival process's number of concurrent users
	// (arrival: closed). Each sends its next request a think time after its
	// previous one ended.
	Users int `yaml:"users,omitempty" json:"users,omitempty"`
	// ThinkS is the closed loop's mean think time in seconds (exponential);
	// 0 sends the next request as soon as the previous one ends.
	ThinkS float64 `yaml:"think_s,omitempty" json:"think_s,omitempty"`
	// MaxConcurrency caps the requests in flight, as vLLM bench's
	// --max-concurrency: a request due while the cap is reached is sent
	// when one ends, and its latencies count from then (InFlight). 0: no
	// cap. Open-loop arrivals and traces only (a closed loop's users are
	// its cap).
	MaxConcurrency int `yaml:"max_concurrency,omitempty" json:"max_concurrency,omitempty"`
	// SkipBadRows passes over malformed rows of a trace instead of
	// stopping at the first (the run reports how many); default false:
	// any bad row is an error naming its file, line and field.
	SkipBadRows bool `yaml:"skip_bad_rows,omitempty" json:"skip_bad_rows,omitempty"`
	// Mix is a built-in workload mix (assistant, enterprise, reasoning,
	// all): named classes with shares, lengths, priorities and SLOs. Empty:
	// one class drawn from input_len and output_len.
	Mix string `yaml:"mix,omitempty" json:"mix,omitempty"`
	// Classes lists the workload's classes, each from a preset or spelled
	// out, added to (or replacing those of the same name in) the mix.
	// With classes, input_len and output_len are unused.
	Classes  []Class `yaml:"classes,omitempty" json:"classes,omitempty"`
	InputLen Dist    `yaml:"input_len,omitempty" json:"input_len,omitzero"`
	// OutputLen is the distribution of output lengths, in tokens. Required
	// unless LengthsFile or Trace is set.
	OutputLen Dist `yaml:"output_len,omitempty" json:"output_len,omitzero"`
	// LengthsFile, when set, is a CSV of (input, output) pairs with header
	// columns num_prefill_tokens and num_decode_tokens (others ignored),
	// such as the processed traces of Vidur and Sarathi-Serve. Each request
	// then takes a row drawn uniformly at random with replacement, keeping
	// the correlation between prompt and output length, and InputLen and
	// OutputLen are ignored. A relative path is relative to the working
	// directory of the process; the caller resolves scenario-relative paths
	// (ResolvePaths).
	LengthsFile string `yaml:"lengths_file,omitempty" json:"lengths_file,omitempty"`
	// LengthsFilter keeps only the lengths_file pairs a benchmark's
	// dataset sampler would keep (LengthFilters): "vllm-sharegpt" is vLLM
	// bench's ShareGPT filter. Empty: every pair.
	LengthsFilter string `yaml:"lengths_filter,omitempty" json:"lengths_filter,omitempty"`
	// Trace is a trace file to replay instead of generating requests (see
	// Formats). A format with arrival times replaces Arrival, Rate, CV,
	// Shape, RateCurve, Requests, DurationS and the lengths; the lengths
	// format (a length-only CSV) replaces only the lengths, like
	// LengthsFile. For ServeGen, name either of the client's two files.
	Trace string `yaml:"trace,omitempty" json:"trace,omitempty"`
	// Format is the trace's format, one of Formats(); empty detects it from
	// the file's name and first line (DetectFormat).
	Format string `yaml:"format,omitempty" json:"format,omitempty"`
	// TimeScale divides every arrival time: 2 replays a trace twice as fast
	// (twice the rate), 0.5 at half speed. 0 means 1. In [0.001, 1000].
	TimeScale float64 `yaml:"time_scale,omitempty" json:"time_scale,omitempty"`
	// WindowS keeps only the requests arriving in [start, end) seconds on
	// the source's own clock (before TimeScale), shifted to start at 0:
	// [600, 1200] replays the trace's eleventh to twentieth minute.
	WindowS Window `yaml:"window_s,omitempty" json:"window_s,omitzero"`
	// Sample keeps each request with this probability, in (0, 1], drawn
	// from the seeded stream "sample" (0, the default, keeps all).
	Sample float64 `yaml:"sample,omitempty" json:"sample,omitempty"`
	// SharedPrefix gives groups of requests a common prompt prefix;
	// Conversation makes multi-turn conversations whose turns repeat the
	// earlier turns. Both apply to generated workloads and traces alike,
	// before the transformations; both are off by default.
	SharedPrefix SharedPrefix `yaml:"shared_prefix,omitempty" json:"shared_prefix,omitzero"`
	Conversation Conversation `yaml:"conversation,omitempty" json:"conversation,omitzero"`
	// TargetRate rescales time so the mean arrival rate — (n−1)/(last −
	// first arrival) after the window and sampling — becomes this many
	// requests per second. It costs one more pass over a trace. 0: off; not
	// with TimeScale.
	TargetRate float64 `yaml:"target_rate,omitempty" json:"target_rate,omitempty"`
	// CapTokens caps each request's prompt + output at this many tokens:
	// the prompt is cut to CapTokens − 1 first (keeping at least one output
	// token), then the output to what remains. 0: no cap; else ≥ 2.
	CapTokens int `yaml:"cap_tokens,omitempty" json:"cap_tokens,omitempty"`
	// CapToContext caps prompt + output at the model's context
	// (max_model_len), which the caller supplies (CapAtContext), or at
	// CapTokens if that is lower.
	CapToContext bool `yaml:"cap_to_context,omitempty" json:"cap_to_context,omitempty"`
}

// Limits that keep a typo from producing a run that cannot finish or an
// arrival clock that overflows its int64 nanoseconds (which hold 292 years).
const (
	maxRequests = 1 << 30
	maxHorizonS = 1e8 // about 3 years of arrivals
)

// checkCount is the one bound on the requests a workload creates, whatever
// creates them: the generator (rate × duration, under a rate curve), a
// ServeGen client's windows (Σ rate_rps × window), and, as each request is
// made, every source New returns (capped). what says what the count comes
// from.
func checkCount(what string, n float64) error {
	if n > maxRequests {
		return fmt.Errorf("%s is about %.3g requests, more than %d (the simulator's limit): lower the rate or the duration", what, n, maxRequests)
	}
	return nil
}

// expectedRequests is the expected number of requests a generator bounded
// by DurationS creates: Rate × DurationS, times the rate curve's mean
// multiplier over the duration.
func (c Config) expectedRequests() float64 {
	n := c.Rate * c.DurationS
	if cv, err := parseCurve(c.RateCurve); err == nil && cv != nil {
		n *= meanMultiplier(cv, c.DurationS*1e9)
	}
	return n
}

// DefaultConfig returns a ShareGPT-like chat workload: Poisson arrivals at
// 10 requests/s (a placeholder: scenarios set the rate they study), 1,000
// requests, prompts lognormal:1024,1024,16,3072 and outputs
// lognormal:256,256,16,1024.
//
// Why these lengths. Chat lengths are right-skewed with a standard deviation
// close to their mean, so a lognormal fits them better than a clipped
// normal. The public chat traces in shared/data bracket the means:
//
//   - ShareGPT first turns as vLLM's benchmark_serving sends them (the 200
//     prompts of streams/vllm_bench_llama33_70b_tp8_a100): prompt mean 213,
//     output mean 213 (median 152), max 780.
//   - Azure's production conversation trace (Splitwise, 2023): prompt mean
//     1,155 (median 1,020, p90 2,735), output mean 211 (median 129, p90 424,
//     max 1,000).
//   - Sarathi-Serve's ShareGPT trace (Llama-2 tokenizer, whole conversations
//     filtered to 8k tokens, so the history counts as prompt): prompt mean
//     2,340 (median 1,730), output mean 439 (median 415, max 1,024).
//
// The prompt mean of 1,024 sits with production chat, between single-turn
// ShareGPT and whole conversations; the output mean of 256 sits between the
// ~210 of vLLM's ShareGPT and Azure and Sarathi's 439. The caps keep every
// request inside a 4,096-token context (Llama-2, the model most of the
// profiles in shared/data measure): prompts ≤ 3,072 (4% of draws land on
// it) and outputs ≤ 1,024, the max_tokens cap seen in both the Azure and
// the Sarathi traces (2% land on it). After clipping the means are about
// 963 and 248 tokens (Dist.Mean). The floors of 16 tokens (a chat template
// alone is longer) move under 0.2% of draws.
func DefaultConfig() Config {
	return Config{
		Arrival:   ArrivalPoisson,
		Rate:      10,
		Requests:  1000,
		InputLen:  MustParseDist("lognormal:1024,1024,16,3072"),
		OutputLen: MustParseDist("lognormal:256,256,16,1024"),
	}
}

// Validate checks c without reading any file (New reads them). Each error
// names the field as the scenario file spells it and the bad value.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("workload.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	closed := c.arrivalName() == ArrivalClosed
	spec, ok := arrivalProcesses()[c.arrivalName()]
	switch {
	case closed && !(c.Users >= 1 && c.Users <= 1_000_000):
		bad("users", "closed-loop arrivals need users in [1, 1000000], got %d", c.Users)
	case closed && !(c.ThinkS >= 0 && c.ThinkS <= maxHorizonS):
		bad("think_s", "must be a think time ≥ 0 s, got %g", c.ThinkS)
	case closed && c.Trace != "":
		bad("arrival", "closed-loop arrivals draw their own requests; they cannot replay a trace")
	case closed && (c.TimeScale != 0 || c.TargetRate != 0 || c.Sample != 0 || c.WindowS != (Window{})):
		bad("arrival", "closed-loop arrivals follow the server; time_scale, target_rate, sample and window_s do not apply")
	case !closed && (c.Users != 0 || c.ThinkS != 0):
		bad("users", "users and think_s apply to arrival: closed, not %s", c.arrivalName())
	}
	switch {
	case c.MaxConcurrency < 0 || c.MaxConcurrency > 1_000_000:
		bad("max_concurrency", "must be a cap on requests in flight in [1, 1000000] (0: none), got %d", c.MaxConcurrency)
	case closed && c.MaxConcurrency != 0:
		bad("max_concurrency", "a closed loop's users are its cap on requests in flight; set users instead")
	}
	if !ok {
		bad("arrival", "unknown arrival process %q; valid: %s", c.Arrival, strings.Join(ArrivalNames(), ", "))
	}
	switch {
	case !finite(c.CV) || c.CV < 0:
		bad("cv", "must be a finite number ≥ 0, got %g", c.CV)
	case !finite(c.Shape) || c.Shape < 0:
		bad("shape", "must be a finite number ≥ 0, got %g", c.Shape)
	case ok && spec.shaped && c.CV > 0 && c.Shape > 0:
		bad("cv", "set cv or shape for %s arrivals, not both (got cv %g, shape %g)", c.arrivalName(), c.CV, c.Shape)
	case ok && spec.shaped && c.CV == 0 && c.Shape == 0:
		bad("cv", "%s arrivals need cv (burstiness, e.g. 2) or shape", c.arrivalName())
	case ok && !spec.shaped && (c.CV != 0 || c.Shape != 0):
		bad("cv", "cv and shape apply to gamma and weibull arrivals, not %s (got cv %g, shape %g)", c.arrivalName(), c.CV, c.Shape)
	case c.CV > 0 && !(c.CV >= minCV && c.CV <= maxCV):
		bad("cv", "must be in [%g, %g], got %g", minCV, float64(maxCV), c.CV)
	case ok && spec.shaped:
		if _, err := spec.build(1, c); err != nil {
			bad("shape", "%v", err)
		}
	}
	if _, err := parseCurve(c.RateCurve); err != nil {
		bad("rate_curve", "%v", err)
	}
	rateOK := c.Rate > 0 && !math.IsInf(c.Rate, 1)
	if !rateOK && !closed {
		bad("rate", "must be > 0 and finite (requests per second), got %g", c.Rate)
	}
	// A trace with its own arrival times is not bounded by requests or
	// duration_s; with the format left to detection, New checks them once
	// it knows.
	bounded := c.Trace == "" || c.Format == FormatLengths
	switch {
	case c.Requests < 0 || c.Requests > maxRequests:
		bad("requests", "must be in [0, %d], got %d", maxRequests, c.Requests)
	case !(c.DurationS >= 0) || math.IsInf(c.DurationS, 1):
		bad("duration_s", "must be a finite number ≥ 0 (seconds), got %g", c.DurationS)
	case c.Requests > 0 && c.DurationS > 0:
		bad("duration_s", "set requests or duration_s, not both: %d requests would end the run and %g s be ignored "+
			"(requests 0 runs for duration_s)", c.Requests, c.DurationS)
	case bounded && c.Requests == 0 && c.DurationS == 0:
		bad("requests", "one of requests and duration_s must be > 0, got requests=0 and duration_s=0")
	case bounded && c.Requests > 0 && rateOK && float64(c.Requests-1)/c.Rate > maxHorizonS:
		bad("requests", "%d requests at %g/s arrive over %.3g s, beyond the %.0g s limit", c.Requests, c.Rate,
			float64(c.Requests-1)/c.Rate, maxHorizonS)
	case c.Requests == 0 && c.DurationS > maxHorizonS:
		bad("duration_s", "must be ≤ %.0g s, got %g", maxHorizonS, c.DurationS)
	case bounded && c.Requests == 0 && rateOK:
		what := fmt.Sprintf("workload.duration_s: %g s at %g/s", c.DurationS, c.Rate)
		if c.RateCurve != "" {
			what += " under rate_curve " + c.RateCurve
		}
		if err := checkCount(what, c.expectedRequests()); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case c.Trace != "" && strings.TrimSpace(c.Trace) == "":
		bad("trace", "must name a file, got %q", c.Trace)
	case c.Trace != "" && c.LengthsFile != "":
		bad("trace", "set trace or lengths_file, not both (a length-only CSV is trace with format lengths)")
	case c.Trace == "" && c.Format != "":
		bad("format", "applies to a trace; set trace too (got %q)", c.Format)
	}
	if _, ok := formats()[c.Format]; c.Format != "" && !ok {
		bad("format", "unknown trace format %q; valid: %s (or leave it empty to detect)", c.Format, strings.Join(Formats(), ", "))
	}
	if _, err := c.ResolveClasses(); err != nil {
		errs = append(errs, err)
	}
	hasClasses := c.Mix != "" || len(c.Classes) > 0
	if hasClasses && (c.Trace != "" || c.LengthsFile != "") {
		bad("classes", "classes draw their own lengths; they cannot be combined with a trace or lengths_file")
	}
	if c.LengthsFile == "" && c.Trace == "" && !hasClasses {
		if c.InputLen.IsZero() {
			bad("input_len", "required unless lengths_file or trace is set (e.g. %q)", "lognormal:1024,1024,16,3072")
		}
		if c.OutputLen.IsZero() {
			bad("output_len", "required unless lengths_file or trace is set (e.g. %q)", "lognormal:256,256,16,1024")
		}
	} else if c.LengthsFile != "" && strings.TrimSpace(c.LengthsFile) == "" {
		bad("lengths_file", "must name a file, got %q", c.LengthsFile)
	}
	if c.TimeScale != 0 && !(c.TimeScale >= 1e-3 && c.TimeScale <= 1e3) {
		bad("time_scale", "must be in [0.001, 1000] (0 means 1), got %g", c.TimeScale)
	}
	if err := c.WindowS.Validate(); err != nil {
		bad("window_s", "%v", err)
	}
	if !(c.Sample >= 0 && c.Sample <= 1) {
		bad("sample", "must be a probability in (0, 1] (0 keeps all), got %g", c.Sample)
	}
	switch {
	case !finite(c.TargetRate) || c.TargetRate < 0 || c.TargetRate > maxTargetRate:
		bad("target_rate", "must be a rate in [0, %g] requests/s (0: off; arrivals are whole nanoseconds), got %g", float64(maxTargetRate), c.TargetRate)
	case c.TargetRate > 0 && c.TimeScale != 0:
		bad("target_rate", "set target_rate or time_scale, not both (got %g and %g)", c.TargetRate, c.TimeScale)
	}
	c.SharedPrefix.validate(bad)
	c.Conversation.validate(bad)
	if closed && (c.SharedPrefix.on() || c.Conversation.on()) {
		bad("conversation", "shared prefixes and conversations apply to open-loop arrivals, not closed (a closed loop's users already repeat)")
	}
	if _, ok := lengthFilters[c.LengthsFilter]; !ok {
		bad("lengths_filter", "unknown filter %q; valid: %s", c.LengthsFilter, strings.Join(LengthFilters(), ", "))
	} else if c.LengthsFilter != "" && c.LengthsFile == "" {
		bad("lengths_filter", "filters the pairs of lengths_file, which is not set")
	}
	if c.CapTokens < 0 || c.CapTokens == 1 || c.CapTokens > MaxLength {
		bad("cap_tokens", "must be 0 (no cap) or in [2, %d] (a prompt token and an output token), got %d", MaxLength, c.CapTokens)
	}
	return errors.Join(errs...)
}

// DrawsLengths reports whether the workload's lengths come from InputLen
// and OutputLen, so that their bounds say which requests can occur.
func (c Config) DrawsLengths() bool {
	return c.Trace == "" && c.LengthsFile == "" && c.Mix == "" && len(c.Classes) == 0
}

// CapAtContext applies CapToContext: it returns c with CapTokens lowered
// to maxModelLen (the model's context) when CapToContext is set. The
// simulator calls it once it knows the context.
func (c Config) CapAtContext(maxModelLen int) Config {
	if c.CapToContext && maxModelLen >= 2 && (c.CapTokens == 0 || c.CapTokens > maxModelLen) {
		c.CapTokens = maxModelLen
	}
	return c
}

// Files lists the files c reads: the trace (both files of a ServeGen
// client), the lengths file and the FILE of every empirical length
// distribution, its classes' included, in that order. A command checks its outputs against them.
func (c Config) Files() []string {
	var files []string
	add := func(p string) {
		if p != "" {
			files = append(files, p)
		}
	}
	add(c.Trace)
	if t, d, err := servegenPair(c.Trace); c.Trace != "" && err == nil {
		add(t) // a ServeGen client is two files, either of which names it
		add(d)
	}
	add(c.LengthsFile)
	dists := []Dist{c.InputLen, c.OutputLen}
	for _, cl := range c.Classes {
		dists = append(dists, cl.InputLen, cl.OutputLen)
	}
	for _, d := range dists {
		if d.kind == kindEmpirical {
			p, _ := d.empiricalParts()
			add(p)
		}
	}
	return files
}

// ResolvePaths returns c with its relative file paths (lengths_file,
// trace, and the FILE of empirical length distributions) resolved against
// dir, as a scenario file's paths are against the scenario's folder.
func (c Config) ResolvePaths(dir string) Config {
	join := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.LengthsFile = join(c.LengthsFile)
	c.Trace = join(c.Trace)
	c.InputLen = c.InputLen.withBase(dir)
	c.OutputLen = c.OutputLen.withBase(dir)
	return c
}

// arrivalName returns the arrival process name with the default applied.
func (c Config) arrivalName() string {
	if c.Arrival == "" {
		return ArrivalPoisson
	}
	return c.Arrival
}
