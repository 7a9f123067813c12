package gate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Options configure a gate.
type Options struct {
	// Metrics to hold, by name (DefaultMetrics when empty). UnservedMetric
	// is always held as well.
	Metrics []string
	// Tolerance is the regression allowed: relative for times and ratios
	// (0.05: 5 % worse), in share points for shares (0.05: 5 points).
	Tolerance float64
	// Bootstrap is the number of resamples (0: judge the point change alone).
	Bootstrap int
	// Seed seeds the resampling; the report depends on nothing else.
	Seed uint64
	// Confidence is the interval's coverage, in (0, 1).
	Confidence float64
	// Block is the number of consecutive streams (by arrival) resampled
	// together; 0 chooses each side's mean number of streams in flight.
	// Streams that overlap in time share the server's steps — one long
	// prefill stalls every stream decoding beside it — so they are not
	// independent draws; resampling them in blocks keeps such an event one
	// event, and the interval honest. 1 resamples streams independently;
	// at most half of each side's streams (Compare refuses more).
	Block int
}

// DefaultOptions holds DefaultMetrics, 5 % tolerance, 1000 resamples and a 95 % interval.
func DefaultOptions() Options {
	return Options{Metrics: slices.Clone(DefaultMetrics), Tolerance: 0.05, Bootstrap: 1000, Seed: 1, Confidence: 0.95}
}

// Validate names the bad option.
func (o *Options) Validate() error {
	switch {
	case !(o.Tolerance >= 0 && o.Tolerance < 1e6):
		return fmt.Errorf("tolerance: must be ≥ 0, got %g", o.Tolerance)
	case o.Bootstrap < 0 || o.Bootstrap > 1_000_000:
		return fmt.Errorf("bootstrap: must be in [0, 1000000] resamples, got %d", o.Bootstrap)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return fmt.Errorf("confidence: must be in (0, 1), got %g", o.Confidence)
	case o.Block < 0:
		return fmt.Errorf("block: must be ≥ 0 streams (0: automatic), got %d", o.Block)
	}
	for _, n := range o.Metrics {
		if _, err := Lookup(n); err != nil {
			return fmt.Errorf("metric: %w", err)
		}
	}
	return nil
}

// Verdicts.
const (
	Pass     = "pass"
	Fail     = "FAIL"
	Improved = "improved"
	// Inconclusive: the metric passed, but at the streams it had the gate
	// could not detect a regression of PowerEffect with probability Power.
	Inconclusive = "inconclusive"
)

// Value is a float64 that encodes as JSON null when not finite (a change
// from a baseline of 0).
type Value float64

// MarshalJSON writes null for NaN and ±Inf.
func (v Value) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Row is one metric's outcome.
type Row struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// Better is "lower" or "higher".
	Better    string `json:"better"`
	Baseline  Value  `json:"baseline"`
	Candidate Value  `json:"candidate"`
	// Change is relative ((candidate − baseline)/baseline) for times and
	// ratios, the difference in share points for shares; ChangeKind says which.
	Change     Value  `json:"change"`
	ChangeKind string `json:"change_kind"`
	// Low and High bound the change's confidence interval.
	Low  Value `json:"ci_low"`
	High Value `json:"ci_high"`
	// Verdict is pass, FAIL (the whole interval is worse than the
	// tolerance) or improved (the whole interval is better than it).
	Verdict string `json:"verdict"`
	// Noise is set when the point change alone is beyond the tolerance but
	// the interval is not: the difference is within resampling noise.
	Noise bool `json:"noise"`
	// Note says why a metric failed without a change: it is undefined on
	// one side (an empty population, such as no finished stream).
	Note string `json:"note,omitempty"`
	// Test is how the verdict was reached: "bootstrap" (the interval
	// against the tolerance) or "fisher" (Fisher's exact one-sided test on
	// the counts of frozen streams; PValue is its p-value).
	Test   string `json:"test"`
	PValue *Value `json:"p_value,omitempty"`
	// N is the number of streams the test used, both sides together
	// (NBaseline + NCandidate): every request row for the bootstrap, the
	// served streams for the freeze test.
	N          int `json:"n"`
	NBaseline  int `json:"n_baseline"`
	NCandidate int `json:"n_candidate"`
	// MDE is the smallest true change, in the change's unit, that this
	// test detects (fails) with probability Power at N streams; null when
	// none is (an unbounded interval, or too few streams for the exact
	// test to fail at all).
	MDE Value `json:"mde"`
	// Primary is true for the metrics the gate was asked to hold (not
	// unserved_share, held by every comparison): a primary metric whose
	// MDE exceeds PowerEffect makes the gate inconclusive.
	Primary bool `json:"primary"`
}

// Report is a gate's outcome.
type Report struct {
	// SchemaVersion is reports.SchemaVersion.
	SchemaVersion    int     `json:"schema_version"`
	Baseline         string  `json:"baseline"`
	Candidate        string  `json:"candidate"`
	BaselineStreams  int     `json:"baseline_streams"`
	CandidateStreams int     `json:"candidate_streams"`
	Tolerance        float64 `json:"tolerance"`
	Bootstrap        int     `json:"bootstrap"`
	Seed             uint64  `json:"seed"`
	Confidence       float64 `json:"confidence"`
	// BaselineBlock and CandidateBlock are the block lengths resampled.
	BaselineBlock  int   `json:"baseline_block"`
	CandidateBlock int   `json:"candidate_block"`
	Rows           []Row `json:"metrics"`
	// SLO holds the SLO terms judged on the candidate (absolute mode, or
	// --slo beside a baseline); a failed term fails the gate.
	SLO []reports.SLOOutcome `json:"slo,omitempty"`
	// Class is the traffic class both sides were restricted to ("" for all).
	Class string `json:"class,omitempty"`
	// QoE and Fluidity report what a person perceives on each side (for
	// reading; gate them with the qoe_* and fluidity_* metrics).
	QoE      *Perceived `json:"qoe,omitempty"`
	Fluidity *Perceived `json:"fluidity,omitempty"`
	// Pass is false when any metric or SLO term failed, or the gate is
	// inconclusive.
	Pass bool `json:"pass"`
	// Verdict is pass, FAIL (a metric or SLO term failed) or inconclusive
	// (nothing failed, but a primary metric's MDE exceeds PowerEffect: too
	// few streams to detect a 25 % regression).
	Verdict string `json:"verdict"`
	// Inconclusive lists the primary metrics too weak to detect PowerEffect.
	Inconclusive []string `json:"inconclusive,omitempty"`
}

// Settle sets Verdict (and Pass) from the rows and SLO terms: FAIL when
// any failed, else inconclusive when a primary metric could not detect a
// regression of PowerEffect, else pass. Call it again after adding SLO
// outcomes.
func (r *Report) Settle() {
	r.Inconclusive = nil
	for _, row := range r.Rows {
		if row.Verdict == Inconclusive {
			r.Inconclusive = append(r.Inconclusive, row.Metric)
		}
	}
	switch {
	case len(r.Failed()) > 0:
		r.Verdict, r.Pass = Fail, false
	case len(r.Inconclusive) > 0:
		r.Verdict, r.Pass = Inconclusive, false
	default:
		r.Verdict, r.Pass = Pass, true
	}
}

// Perceived is a per-stream score summarized on both sides.
type Perceived struct {
	Baseline  reports.ScoreSummary `json:"baseline"`
	Candidate reports.ScoreSummary `json:"candidate"`
}

// Failed lists the metrics and SLO terms that failed.
func (r *Report) Failed() []string {
	var out []string
	for _, row := range r.Rows {
		if row.Verdict == Fail {
			out = append(out, row.Metric)
		}
	}
	for _, o := range r.SLO {
		if !o.Pass {
			out = append(out, o.Term)
		}
	}
	return out
}

// Compare judges candidate against baseline. Both are summarized under the
// baseline's thresholds; errors name a metric a sample cannot provide.
func Compare(base, cand Sample, o Options) (Report, error) {
	if len(o.Metrics) == 0 {
		o.Metrics = slices.Clone(DefaultMetrics)
	}
	primary := slices.Clone(o.Metrics)
	if !slices.Contains(o.Metrics, UnservedMetric) {
		o.Metrics = append(slices.Clone(o.Metrics), UnservedMetric)
	}
	if err := o.Validate(); err != nil {
		return Report{}, err
	}
	ms := make([]Metric, len(o.Metrics))
	needGaps := false
	for i, n := range o.Metrics {
		ms[i], _ = Lookup(n)
		for _, s := range []*Sample{&base, &cand} {
			if ms[i].PerGap && s.Result.Measured != nil && s.Result.Measured.NoGaps {
				return Report{}, fmt.Errorf("%s records no gaps (first and last token times only): metric %s cannot be computed from it", s.Name, n)
			}
			if ms[i].NeedsGaps && !s.AllGaps {
				return Report{}, fmt.Errorf("%s has per-stream rows, not every gap: metric %s (pooled ITL) needs a stream file "+
					"(itlsim run --timelines, or a benchmark's own file)", s.Name, n)
			}
		}
		needGaps = needGaps || ms[i].NeedsGaps
	}
	for _, s := range []*Sample{&base, &cand} {
		if s.Streams() == 0 {
			return Report{}, fmt.Errorf("%s has no streams to compare", s.Name)
		}
		// A block longer than half the streams leaves fewer than two
		// blocks: every resample is (nearly) the sample itself, and an
		// interval of no width would pass or fail on the point change alone.
		if limit := max(1, s.Streams()/2); o.Bootstrap > 0 && o.Block > limit {
			return Report{}, fmt.Errorf("block: %d streams is more than half of the %d streams of %s: with fewer than two blocks a resample is "+
				"(nearly) the sample itself and the interval has (nearly) no width; give at most %d (0: automatic)", o.Block, s.Streams(), s.Name, limit)
		}
	}
	m := base.Metrics
	// values are the metrics of r, NaN where undefined.
	values := func(r *sim.Result, cls []sim.SLO) []float64 {
		sum := reports.SummarizeWith(r, m, reports.Options{ClassSLO: cls})
		out := make([]float64, len(ms))
		for i, mt := range ms {
			v, ok := mt.value(&sum)
			if mt.Exact {
				k, n := frozenCounts(r, m.StallThresholdMS)
				v, ok = float64(k)/float64(n), n > 0
			}
			if !ok {
				v = math.NaN()
			}
			out[i] = v
		}
		return out
	}
	bv, cv := values(base.Result, base.ClassSLO), values(cand.Result, cand.ClassSLO)
	bsum := reports.SummarizeWith(base.Result, m, reports.Options{ClassSLO: base.ClassSLO})
	csum := reports.SummarizeWith(cand.Result, m, reports.Options{ClassSLO: cand.ClassSLO})
	rep := Report{SchemaVersion: reports.SchemaVersion, Baseline: base.Name, Candidate: cand.Name, BaselineStreams: base.Streams(), CandidateStreams: cand.Streams(),
		Tolerance: o.Tolerance, Bootstrap: o.Bootstrap, Seed: o.Seed, Confidence: o.Confidence, Pass: true,
		BaselineBlock: blockLen(base.Result, o.Block), CandidateBlock: blockLen(cand.Result, o.Block)}
	if bsum.QoE.N > 0 || csum.QoE.N > 0 {
		rep.QoE = &Perceived{Baseline: bsum.QoE, Candidate: csum.QoE}
		rep.Fluidity = &Perceived{Baseline: bsum.Fluidity, Candidate: csum.Fluidity}
	}

	// changes[i][b] is metric i's change in resample b.
	changes := make([][]float64, len(ms))
	for i := range changes {
		changes[i] = make([]float64, o.Bootstrap)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), max(1, o.Bootstrap)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rb, rc := newResample(base.Result, needGaps, rep.BaselineBlock), newResample(cand.Result, needGaps, rep.CandidateBlock)
			for b := range next {
				// Each resample draws from its own stream, "bootstrap/<b>"
				// under the gate's seed, so the report does not depend on
				// which goroutine ran it.
				rng := seed.Stream(o.Seed, "bootstrap", b)
				x, y := values(rb.draw(&rng), base.ClassSLO), values(rc.draw(&rng), cand.ClassSLO)
				for i := range ms {
					changes[i][b] = change(ms[i], x[i], y[i])
				}
			}
		}()
	}
	for b := range o.Bootstrap {
		next <- b
	}
	close(next)
	wg.Wait()

	alpha := (1 - o.Confidence) / 2
	for i, mt := range ms {
		row := Row{Metric: mt.Name, Unit: mt.Unit, Better: "lower", Baseline: Value(bv[i]), Candidate: Value(cv[i]), ChangeKind: "relative",
			Test: "bootstrap", NBaseline: base.Streams(), NCandidate: cand.Streams(), Primary: slices.Contains(primary, mt.Name)}
		if mt.HigherIsBetter {
			row.Better = "higher"
		}
		if mt.Share() {
			row.ChangeKind = "points"
		}
		c := change(mt, bv[i], cv[i])
		row.Change, row.Low, row.High = Value(c), Value(c), Value(c)
		if undefined := undefinedSides(bv[i], cv[i]); undefined != "" {
			// A metric of an empty population has no value to compare: it
			// fails, and says why, rather than reading as 0 ("improved").
			row.Verdict, row.Note = Fail, "undefined on the "+undefined+" (an empty population: no finished stream, or none with gaps)"
			row.N, row.MDE = row.NBaseline+row.NCandidate, Value(math.NaN())
			if mt.Exact {
				row.Test = "fisher"
			}
			rep.Pass = false
			rep.Rows = append(rep.Rows, row)
			continue
		}
		if o.Bootstrap > 0 {
			xs := slices.DeleteFunc(changes[i], math.IsNaN)
			slices.Sort(xs)
			if len(xs) > 0 {
				row.Low, row.High = Value(rank(xs, alpha)), Value(rank(xs, 1-alpha))
			}
		}
		// worse(v): v is a change beyond the tolerance in the bad direction.
		worse := func(v float64) bool { return v > o.Tolerance }
		better := func(v float64) bool { return v < -o.Tolerance }
		lo, hi := float64(row.Low), float64(row.High)
		if mt.Exact {
			judgeFrozen(&row, base.Result, cand.Result, m.StallThresholdMS, alpha, o.Tolerance)
		} else {
			if mt.HigherIsBetter {
				worse, better = better, worse
				lo, hi = hi, lo
			}
			switch {
			case worse(lo):
				row.Verdict = Fail
			case better(hi):
				row.Verdict = Improved
			default:
				row.Verdict = Pass
				row.Noise = worse(c)
			}
			row.N = row.NBaseline + row.NCandidate
			row.MDE = Value(o.Tolerance)
			if o.Bootstrap > 0 {
				row.MDE = Value(bootstrapMDE(float64(row.Low), float64(row.High), alpha, o.Tolerance))
			}
		}
		if row.Verdict == Pass && row.Primary && !(float64(row.MDE) <= PowerEffect) {
			row.Verdict = Inconclusive
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.Settle()
	return rep, nil
}

// judgeFrozen judges the frozen share by Fisher's exact test on the two
// counts, one-sided at alpha each way: FAIL when the candidate freezes
// significantly more streams (and more than tol more, relatively),
// improved when significantly fewer. The bootstrap interval is kept for
// reading. Its MDE is the smallest increase in share points detected with
// probability Power, at the baseline's share.
func judgeFrozen(row *Row, base, cand *sim.Result, thresholdMS, alpha, tol float64) {
	kb, nb := frozenCounts(base, thresholdMS)
	kc, nc := frozenCounts(cand, thresholdMS)
	row.Test, row.NBaseline, row.NCandidate, row.N = "fisher", nb, nc, nb+nc
	up, down := fisherUpper(kb, nb, kc, nc), fisherLower(kb, nb, kc, nc)
	b, c := float64(kb)/float64(nb), float64(kc)/float64(nc)
	p := Value(up)
	switch {
	case freezeFails(kb, nb, kc, nc, alpha, tol):
		row.Verdict = Fail
	case down < alpha && c < b*(1-tol):
		row.Verdict, p = Improved, Value(down)
	default:
		row.Verdict = Pass
	}
	row.PValue = &p
	row.Noise = row.Verdict == Pass && c > b*(1+tol)
	row.MDE = Value(freezeMDE(b, nb, nc, alpha, tol))
}

// undefinedSides names the side(s) whose value is undefined (NaN), or "".
func undefinedSides(b, c float64) string {
	switch {
	case math.IsNaN(b) && math.IsNaN(c):
		return "baseline and the candidate"
	case math.IsNaN(b):
		return "baseline"
	case math.IsNaN(c):
		return "candidate"
	}
	return ""
}

// change is the metric's change from baseline b to candidate c: relative,
// or in points for shares. From a baseline of 0, any increase is +Inf.
// NaN when either side is undefined.
func change(m Metric, b, c float64) float64 {
	if math.IsNaN(b) || math.IsNaN(c) {
		return math.NaN()
	}
	if m.Share() {
		return c - b
	}
	switch {
	case b != 0:
		return (c - b) / math.Abs(b)
	case c == 0:
		return 0
	default:
		return math.Copysign(math.Inf(1), c)
	}
}

// rank is numpy's linear percentile of sorted xs, safe with infinities.
func rank(xs []float64, q float64) float64 {
	h := float64(len(xs)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	a, b, f := xs[lo], xs[lo+1], h-float64(lo)
	if f == 0 || a == b {
		return a
	}
	return a + f*(b-a)
}

// blockLen is the block length for r: o if given, else the mean number
// of streams in flight (Little's law: Σ E2EL over the run's duration),
// at least 1 and at most half the streams.
func blockLen(r *sim.Result, o int) int {
	n := r.Streams.Len()
	if o > 0 {
		return max(1, min(o, n))
	}
	if r.Duration <= 0 || n < 2 {
		return 1
	}
	var busy float64
	for i := range r.Streams.Len() {
		if r.Streams.At(i).Status == sim.StatusFinished {
			busy += float64(r.Streams.At(i).E2EL)
		}
	}
	l := int(math.Round(busy / float64(r.Duration)))
	return max(1, min(l, n/2))
}

// resample draws circular block-bootstrap resamples of one sample's
// streams, ordered by arrival, into a buffer it reuses.
type resample struct {
	src   *sim.Result
	order []int // stream indices by arrival, then id
	block int
	dst   sim.Result
	ms    sim.Measured
}

func newResample(src *sim.Result, keepGaps bool, block int) *resample {
	r := &resample{src: src, block: max(1, block)}
	r.order = make([]int, src.Streams.Len())
	for i := range r.order {
		r.order[i] = i
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		x, y := src.Streams.At(a), src.Streams.At(b)
		if c := cmp.Compare(x.Arrival, y.Arrival); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	r.dst = sim.Result{Name: src.Name, Duration: src.Duration, Streams: sim.SummariesOf(make([]sim.StreamSummary, src.Streams.Len())...), Measured: &r.ms}
	r.ms.Streams = make([]sim.MeasuredStream, src.Streams.Len())
	if src.Measured != nil {
		r.ms.NoGaps, r.ms.Failed = src.Measured.NoGaps, src.Measured.Failed
		if !keepGaps {
			// Drop the gap lists (only pooled ITL reads them) so a
			// resample summarizes in time proportional to its streams.
			src = &sim.Result{Streams: src.Streams, Measured: &sim.Measured{Streams: dropGaps(src.Measured.Streams)}}
			r.src = src
		}
	} else {
		// A simulation's result: its integer times are exact.
		ms := make([]sim.MeasuredStream, src.Streams.Len())
		for i := range src.Streams.Len() {
			st := src.Streams.At(i)
			ms[i] = sim.MeasuredStream{TTFT: float64(st.TTFT), E2EL: float64(st.E2EL), GapMax: float64(st.GapMax)}
		}
		r.src = &sim.Result{Streams: src.Streams, Measured: &sim.Measured{Streams: ms}}
	}
	return r
}

func dropGaps(ss []sim.MeasuredStream) []sim.MeasuredStream {
	out := slices.Clone(ss)
	for i := range out {
		out[i].Gaps = nil
	}
	return out
}

// draw fills the buffer with len(streams) streams: blocks of r.block
// consecutive arrivals from uniform starts, wrapping around at the end,
// until there are as many streams as the sample has. Failed requests (not
// streams) keep their count.
func (r *resample) draw(rng *seed.Rand) *sim.Result {
	n := r.src.Streams.Len()
	d := &r.dst
	d.Requests, d.Finished, d.InputTokens, d.OutputTokens = 0, 0, 0, 0
	d.Rejected = [len(d.Rejected)]int{}
	start, j := 0, r.block
	for i := range n {
		if j == r.block {
			start, j = rng.IntN(n), 0
		}
		k := r.order[(start+j)%n]
		j++
		st := r.src.Streams.At(k)
		*d.Streams.At(i) = *st
		r.ms.Streams[i] = r.src.Measured.Streams[k]
		d.Requests++
		if st.Status == sim.StatusFinished {
			d.Finished++
			d.InputTokens += int64(st.InputTokens)
			d.OutputTokens += int64(st.OutputTokens)
		} else {
			d.Rejected[st.Reject]++
		}
	}
	for _, v := range r.ms.Failed {
		d.Requests += v
	}
	return d
}
