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
// about. The window is the arrivals between the two, as shares of the
// arrival span [first arrival, last arrival]: requests arriving in
// [warm-up, (1−Drain)·span] are measured, and throughput counts what
// finished inside that interval. The warm-up is WarmUp·span, or the time
// the server takes to fill if longer: the p90 of the run's E2EL (until the
// longer streams start ending, fewer run together than in the steady
// state), capped at half the span; a WarmUp of 0 measures from the
// first arrival.
type Window struct {
	// WarmUp is the share of the arrival span left out at the start, in [0, 0.9].
	WarmUp float64 `json:"warm_up"`
	// Drain is the share of the arrival span left out at the end, in [0, 0.9].
	Drain float64 `json:"drain"`
}

// DefaultWindow leaves out the first 20 % of the arrival span (the longest
// streams of the default chat workload need that long to reach a steady
// batch) and the last 10 %.
func DefaultWindow() Window { return Window{WarmUp: 0.2, Drain: 0.1} }

// Validate names the first bad field.
func (w Window) Validate() error {
	switch {
	case !(w.WarmUp >= 0 && w.WarmUp <= 0.9):
		return fmt.Errorf("warm-up: expected a share in [0, 0.9], got %g", w.WarmUp)
	case !(w.Drain >= 0 && w.Drain <= 0.9):
		return fmt.Errorf("drain: expected a share in [0, 0.9], got %g", w.Drain)
	case w.WarmUp+w.Drain > 0.9:
		return fmt.Errorf("warm-up %g + drain %g: expected at most 0.9 together (something must be measured)", w.WarmUp, w.Drain)
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
	// Stable is the whole run's summary.stable: false when it never
	// reached a steady state (the backlog or the waiting queue grew over
	// the second half of the arrivals). Unstable says why.
	Stable   bool   `json:"stable"`
	Unstable string `json:"unstable,omitempty"`
	// Summary is reports.Summarize over the measured requests, with the
	// window's length as duration and its throughput; pooled ITL covers
	// the gaps that ended in the window; stable is the whole run's. Stall
	// time by cause covers the whole run.
	Summary reports.Summary `json:"summary"`
}

// Measure computes a run's figures over window w. client is what the
// clients saw (sim.Engine.Result), server the server's view
// (sim.Engine.ServerResult, the same pointer without a delivery path):
// the queue is the server's.
func Measure(cfg sim.Config, client, server *sim.Result, w Window) Metrics {
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
	if w.WarmUp > 0 {
		lo = max(lo, float64(first)+min(fillTime(client), maxFill*span))
	}
	hi := float64(first) + (1-w.Drain)*span
	win := client.Duration.Seconds()
	if hi > lo {
		win = (hi - lo) / 1e9
	} else {
		lo, hi = 0, float64(client.Duration) // one arrival: measure the run
	}

	fr := *client
	fr.Streams = sim.Summaries{}
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
	if pooled != nil {
		fr.Pooled = pooled
	}

	m := Metrics{Summary: reports.SummarizeWith(&fr, cfg.Metrics, reports.Options{ClassSLO: reports.ClassSLOs(&fr, cfg)})}
	m.ArrivedPerS = float64(fr.Requests) / win
	m.AchievedPerS = finished / win
	m.OutputTokensPerS = tokens / win
	m.Summary.RequestsPerS = m.AchievedPerS
	m.Summary.OutputTokensPerS = m.OutputTokensPerS
	m.Summary.InputTokensPerS = float64(fr.InputTokens) / win
	m.TokensPerSPerUser.Mean = m.Summary.TokensPerSPerUser.Mean
	m.TokensPerSPerUser.P10, _ = m.Summary.Percentile(reports.PopTokensPerSPerUser, 10)

	// Stability is the whole run's: it looks at the second half of all
	// the arrivals, which a steady state must have reached.
	whole := reports.Summarize(server, cfg.Metrics)
	m.Stable, m.Unstable = whole.Stable, whole.StableNote
	m.Summary.Stable, m.Summary.StableNote = whole.Stable, whole.StableNote
	m.round()
	return m
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
