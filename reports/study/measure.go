package study

import (
	"fmt"
	"math"
	"slices"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

// Window is the part of a run that is measured. A run starts empty (the
// first requests find an idle server: warm-up) and, after the last
// arrival, empties again (the last requests finish on a server whose load
// is falling: drain); neither is the steady state a capacity figure is
// about. The window is the arrivals between the two: requests arriving in
// [warm-up end, first + (1−Drain)·span] of the arrival span [first
// arrival, last arrival] are measured, and throughput counts what finished
// inside that interval.
//
// With Auto (the default) the warm-up is detected by MSER-5 on the run's
// backlog (SteadyRule); otherwise it is WarmUp·span, or the time the
// server takes to fill if longer: the p90 of the run's E2EL, capped at
// half the span; a WarmUp of 0 measures from the first arrival.
//
// A run whose steady state is not conclusive (SteadyRule: stable or
// unstable) is run again with twice the requests (or seconds of
// arrivals), up to MaxExtend times the scenario's; one still not
// conclusive then is reported inconclusive, never as stable.
type Window struct {
	// WarmUp is the share of the arrival span left out at the start, in
	// [0, 0.9], when Auto is off.
	WarmUp float64 `json:"warm_up"`
	// Drain is the share of the arrival span left out at the end, in [0, 0.9].
	Drain float64 `json:"drain"`
	// Auto detects the warm-up with MSER-5.
	Auto bool `json:"warm_up_auto"`
	// MaxExtend is the largest multiple of the scenario's length a run is
	// extended to (by doubling), a power of 2 in [1, 64]; 1 never extends.
	MaxExtend int `json:"max_extend"`
}

// DefaultWindow detects the warm-up (MSER-5), leaves out the last 10 % of
// the arrival span, and extends a run up to 8 times the scenario's length:
// on the default scenario 1,000 requests settle runs below 90 % and above
// 105 % of capacity, and 8,000 settle all but those within a few percent
// of it (docs/how-sure.md).
func DefaultWindow() Window { return Window{Auto: true, Drain: 0.1, MaxExtend: 8} }

// Validate names the first bad field.
func (w Window) Validate() error {
	switch {
	case !(w.WarmUp >= 0 && w.WarmUp <= 0.9):
		return fmt.Errorf("--warm-up: expected auto or a share in [0, 0.9], got %g", w.WarmUp)
	case !(w.Drain >= 0 && w.Drain <= 0.9):
		return fmt.Errorf("--drain: expected a share in [0, 0.9], got %g", w.Drain)
	case !w.Auto && w.WarmUp+w.Drain > 0.9:
		return fmt.Errorf("--warm-up %g + --drain %g: expected at most 0.9 together (something must be measured)", w.WarmUp, w.Drain)
	case w.MaxExtend < 1 || w.MaxExtend > 64 || w.MaxExtend&(w.MaxExtend-1) != 0:
		return fmt.Errorf("--max-extend: expected a power of 2 from 1 to 64 (the run is doubled up to that multiple), got %d", w.MaxExtend)
	}
	return nil
}

// UserRate is a per-stream rate across streams, tokens/s.
type UserRate struct {
	Mean float64 `json:"mean"`
	P10  float64 `json:"p10"`
}

// Metrics are one run's figures over its measurement window. Times are
// ms, rates per second.
type Metrics struct {
	// ArrivedPerS is requests that arrived in the window per second.
	ArrivedPerS float64 `json:"arrived_req_per_s"`
	// AchievedPerS is requests that finished in the window per second.
	AchievedPerS float64 `json:"achieved_req_per_s"`
	// OutputTokensPerS is output tokens emitted in the window per second
	// (the whole system's).
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// TokensPerSPerUser is the mean and p10 over the measured streams of
	// summary.tokens_per_s_per_user, each stream's (output tokens − 1) /
	// (E2EL − TTFT): how fast its text arrives once it has started.
	TokensPerSPerUser UserRate `json:"tokens_per_s_per_user"`
	// Stable is true when the steady-state test (SteadyRule) found the
	// run stable; Unstable says why not (unstable, inconclusive, or too
	// few arrivals to judge). Steady holds the test's figures.
	Stable   bool   `json:"stable"`
	Unstable string `json:"unstable,omitempty"`
	Steady   Steady `json:"steady"`
	// Summary is reports.Summarize over the measured requests, with the
	// window's length as duration and its throughput; pooled ITL covers
	// the gaps that ended in the window; stable is the steady-state
	// test's. Stall time by cause covers the whole run.
	Summary reports.Summary `json:"summary"`
}

// Measure computes a run's figures over window w. client is what the
// clients saw (sim.Engine.Result), server the server's view
// (sim.Engine.ServerResult, the same pointer without a delivery path):
// the backlog is the server's.
func Measure(cfg sim.Config, client, server *sim.Result, w Window) Metrics {
	m, _ := measure(cfg, client, server, w, sectioning{})
	return m
}

// measure is Measure; with sections.n > 0 it also summarises that many
// equal consecutive sections of the window (batch means for the SLO
// terms' bounds), each drawing only the populations sections.pops.
func measure(cfg sim.Config, client, server *sim.Result, w Window, sections sectioning) (Metrics, []reports.Summary) {
	st := DefaultSteadyRule().Judge(server)
	var first, last sim.Time
	for i := range client.Streams.Len() {
		a := client.Streams.At(i).Arrival
		if i == 0 || a < first {
			first = a
		}
		if i == 0 || a > last {
			last = a
		}
	}
	span := float64(last - first)
	lo := float64(first) + w.WarmUp*span
	switch {
	case w.Auto:
		lo = max(float64(first), st.warmEnd)
	case w.WarmUp > 0:
		lo = max(lo, float64(first)+min(fillTime(client), maxFill*span))
	}
	hi := float64(first) + (1-w.Drain)*span
	if hi <= lo {
		lo, hi = 0, float64(client.Duration) // one arrival (or a warm-up past the drain): measure the run
	}
	var buf sim.Summaries // the window's streams, then each section's
	m := Metrics{Summary: summarizeSpan(cfg, client, lo, hi, nil, &buf)}
	win := (hi - lo) / 1e9
	m.ArrivedPerS = float64(m.Summary.Requests) / win
	m.AchievedPerS = m.Summary.RequestsPerS
	m.OutputTokensPerS = m.Summary.OutputTokensPerS
	m.TokensPerSPerUser.Mean = m.Summary.TokensPerSPerUser.Mean
	m.TokensPerSPerUser.P10, _ = m.Summary.Percentile(reports.PopTokensPerSPerUser, 10)

	m.Steady = st
	m.Stable = st.Verdict == VerdictStable
	if !m.Stable {
		m.Unstable = st.Note
	}
	m.Summary.Stable, m.Summary.StableNote = m.Stable, m.Unstable
	m.round()
	var secs []reports.Summary
	if n := sections.n; n > 0 && hi > lo {
		d := (hi - lo) / float64(n)
		for k := range n {
			secs = append(secs, summarizeSpan(cfg, client, lo+float64(k)*d, lo+float64(k+1)*d, &sections, &buf))
		}
	}
	return m, secs
}

// summarizeSpan is the summary of the requests arriving in [lo, hi] ns,
// with throughput and pooled ITL from what finished (and the gaps that
// ended) inside it. A section without a series bucket of its own has no
// pooled ITL; the whole window then keeps the run's. A section (sec not
// nil) draws only the populations sec.pops. The span's streams are copied
// into buf, emptied first (the summary keeps none of them).
func summarizeSpan(cfg sim.Config, client *sim.Result, lo, hi float64, sec *sectioning, buf *sim.Summaries) reports.Summary {
	win := (hi - lo) / 1e9
	fr := *client
	buf.Reset()
	fr.Streams = *buf
	fr.Requests, fr.Finished, fr.Cancelled = 0, 0, 0
	fr.InputTokens, fr.OutputTokens = 0, 0
	fr.Rejected = [len(client.Rejected)]int{}
	fr.StreamsHit = [sim.NumCauses]int{}
	for i := range client.Streams.Len() {
		st := client.Streams.At(i)
		if a := float64(st.Arrival); a < lo || a > hi {
			continue
		}
		fr.Streams.Append(*st)
		fr.Requests++
		switch st.Status {
		case sim.StatusFinished:
			fr.Finished++
		case sim.StatusCancelled:
			fr.Cancelled++
		case sim.StatusRejected:
			fr.Rejected[st.Reject]++
		}
		if st.Status == sim.StatusFinished || st.Status == sim.StatusCancelled {
			fr.InputTokens += int64(st.InputTokens)
			fr.OutputTokens += int64(st.OutputTokens)
			for c := range sim.NumCauses {
				if st.Causes&(1<<c) != 0 {
					fr.StreamsHit[c]++
				}
			}
		}
	}
	*buf = fr.Streams // keep the chunks it grew
	fr.Duration = sim.Time(win * 1e9)

	// Throughput and the pooled ITL come from the time series: what
	// finished (and the gaps that ended) inside [lo, hi], each bucket
	// weighted by the share of it inside.
	var finished, tokens float64
	var pooled *quantile.Histogram
	ser := &client.Series
	for _, b := range ser.Buckets {
		f := overlap(float64(b.Start), float64(b.Start+ser.Interval), lo, hi) / float64(ser.Interval)
		if f <= 0 {
			continue
		}
		finished += f * float64(b.Finished)
		tokens += f * float64(b.OutputTokens)
		if b.ITL != nil && f >= 0.5 {
			if pooled == nil {
				pooled = quantile.NewHistogram(b.ITL.Bits)
			}
			pooled.Merge(b.ITL)
		}
	}
	switch {
	case pooled != nil:
		fr.Pooled = pooled
	case sec != nil: // no bucket inside: no pooled ITL of its own
		fr.Pooled = quantile.NewHistogram(client.Pooled.Bits)
	}
	o := reports.Options{ClassSLO: reports.ClassSLOs(&fr, cfg)}
	if sec != nil {
		o.Pops = sec.pops
	}
	s := reports.SummarizeWith(&fr, cfg.Metrics, o)
	s.RequestsPerS = finished / win
	s.OutputTokensPerS = tokens / win
	s.InputTokensPerS = float64(fr.InputTokens) / win
	return s
}

// maxFill caps the warm-up fillTime asks for, as a share of the arrival
// span: an overloaded run's streams last long, and half of it is still
// measured.
const maxFill = 0.5

// fillTime is how long a server takes to fill from empty: until the
// first streams of the longer kind end, the streams running together are
// fewer than in the steady state. It is the p90 of E2EL over the streams
// that finished.
func fillTime(r *sim.Result) float64 {
	var e2el []float64
	for i := range r.Streams.Len() {
		if st := r.Streams.At(i); st.Status == sim.StatusFinished {
			e2el = append(e2el, float64(st.E2EL))
		}
	}
	if len(e2el) == 0 {
		return 0
	}
	slices.Sort(e2el)
	return quantile.Linear(e2el, 0.9)
}

func overlap(a0, a1, b0, b1 float64) float64 { return max(0, min(a1, b1)-max(a0, b0)) }

// round keeps the derived figures to 6 significant digits, as the tables
// show them, so JSON and CSV stay readable; the summary is left as is.
func (m *Metrics) round() {
	for _, p := range []*float64{&m.ArrivedPerS, &m.AchievedPerS, &m.OutputTokensPerS, &m.TokensPerSPerUser.Mean, &m.TokensPerSPerUser.P10} {
		*p = sig6(*p)
	}
}

func sig6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	e := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}
