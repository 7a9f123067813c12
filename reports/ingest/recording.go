package ingest

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/itlsim/itlsim/reports/qoe"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
)

// Recording is one benchmark run read from a file: its streams (requests
// that produced output) and its failed requests. Times are float
// nanoseconds, as measured: no rounding to the simulator's clock.
type Recording struct {
	// Name labels the run: the file's base name, with the run's own name
	// when the file holds several.
	Name string
	// File is the path it was read from; Format the importer that read it.
	File   string
	Format Format
	// Model is the served model as the file names it (vLLM's model_id),
	// "" when the file does not say.
	Model string
	// Streams are the requests that produced at least one chunk, in file order.
	Streams []Stream
	// FailedStreams are failed requests whose file records the chunks they
	// showed before failing (itlsim's stream format); they are counted in
	// Failed too. Their tokens and stalls count in the run's totals, as a
	// simulation counts them, and nowhere else.
	FailedStreams []Stream
	// Failed counts requests that ended in an error, by the error's kind.
	Failed map[string]int
	// Rejected counts requests the server refused, by reason (itlsim's
	// stream format records them); Refused lists them, in file order.
	Rejected [scheduler.NumReasons]int
	Refused  []Refusal
	// Duration is the run's length in ns (the tool's benchmark duration
	// when it records one).
	Duration float64
	// NoGaps is set when the source records only each stream's first and
	// last token times (GuideLLM): gaps are unknown.
	NoGaps bool
	// NoArrivals is set when the source records no request start times
	// (older vLLM results): every arrival is 0 and there is no time series.
	NoArrivals bool
	// Notes say what the file lacks and how the importer filled it in.
	Notes []string
	// Load is how the benchmark offered its requests, as far as the file
	// says; `itlsim validate` offers the simulated requests the same way.
	Load Load
}

// Load describes a benchmark's request schedule.
type Load struct {
	// Strategy is how requests were sent: StrategyPoisson and
	// StrategyConstant at Rate, StrategyAllAtOnce (vLLM's rate "inf",
	// GuideLLM's "throughput"), StrategyConcurrent (a closed loop of
	// Concurrency users, GuideLLM's "synchronous" is one user), or ""
	// when the file does not say.
	Strategy string
	// Rate is the offered rate in requests/s for poisson and constant.
	Rate float64
	// Concurrency caps the requests in flight (vLLM's --max-concurrency,
	// GuideLLM's streams); 0 for no cap.
	Concurrency int
	// Burstiness is vLLM's gamma shape of the gaps between requests
	// (1: Poisson); 0 when not recorded.
	Burstiness float64
}

// The strategies of Load.
const (
	StrategyPoisson    = "poisson"
	StrategyConstant   = "constant"
	StrategyAllAtOnce  = "all-at-once"
	StrategyConcurrent = "concurrent"
)

// Refusal is a request the server refused: no output, a reason.
type Refusal struct {
	ID          int
	Arrival     float64 // ns from the start of the run
	InputTokens int
	Reason      scheduler.Reason
}

// Stream is one request's measured output.
type Stream struct {
	ID           int
	Arrival      float64 // ns from the start of the run
	InputTokens  int
	OutputTokens int
	TTFT         float64   // ns, first chunk − arrival
	E2EL         float64   // ns, last chunk − arrival
	Gaps         []float64 // ns between consecutive chunks; nil when unknown
	// Chunks is the number of visible chunks: len(Gaps)+1, or what the
	// source says when it records no gaps (0 when unknown).
	Chunks int
	// ChunkTokens gives each chunk's tokens when the source records them.
	ChunkTokens []int
}

// maxNS bounds every time the importers accept: 2^53 ns (about 104 days),
// beyond which float64 nanoseconds stop being exact integers.
const maxNS = 1 << 53

// maxDays is maxNS in whole days, for messages.
const maxDays = maxNS / (86400 * 1_000_000_000)

// checkTime validates one time in ns: finite, not negative, not absurd.
func checkTime(what string, ns float64) error {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return fmt.Errorf("%s: expected a finite time, got %v", what, ns)
	case ns < 0:
		return fmt.Errorf("%s: negative time %g ms", what, ns/1e6)
	case ns >= maxNS:
		return fmt.Errorf("%s: time %g s is beyond %d days", what, ns/1e9, maxDays)
	}
	return nil
}

// checkStream validates a parsed stream; what names it in errors.
func checkStream(what string, s *Stream) error {
	if err := checkTime(what+": arrival", s.Arrival); err != nil {
		return err
	}
	if err := checkTime(what+": time to first token", s.TTFT); err != nil {
		return err
	}
	for j, g := range s.Gaps {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return fmt.Errorf("%s: gap %d: expected a finite time, got %v", what, j, g)
		}
		if g < 0 {
			return fmt.Errorf("%s: gap %d: negative gap %g ms", what, j, g/1e6)
		}
	}
	if err := checkTime(what+": end-to-end latency", s.E2EL); err != nil {
		return err
	}
	if s.E2EL < s.TTFT {
		return fmt.Errorf("%s: last chunk (%g ms) before the first (%g ms)", what, s.E2EL/1e6, s.TTFT/1e6)
	}
	if s.Arrival+s.E2EL >= maxNS {
		return fmt.Errorf("%s: ends %g s after the run started, beyond %d days", what, (s.Arrival+s.E2EL)/1e9, maxDays)
	}
	if s.InputTokens < 0 || s.OutputTokens < 0 {
		return fmt.Errorf("%s: negative token count (input %d, output %d)", what, s.InputTokens, s.OutputTokens)
	}
	if s.ChunkTokens != nil && len(s.ChunkTokens) != s.Chunks {
		return fmt.Errorf("%s: %d chunk token counts for %d chunks", what, len(s.ChunkTokens), s.Chunks)
	}
	return nil
}

// rejected is the number of requests the server refused.
func (r *Recording) rejected() int {
	n := 0
	for _, v := range r.Rejected {
		n += v
	}
	return n
}

// noteTokenCounts says, in a counted note, when streams record output
// token counts that their chunks contradict: more tokens than chunks (TPOT
// divides the decode time by tokens, so it falls far below the stream's
// gaps: 50 tokens in 2 chunks 100 ms apart give a TPOT of 2 ms), or fewer
// (a chunk with no token, or a wrong count). A difference of one token is
// common and harmless (vLLM and AIPerf files often count a first chunk of
// two tokens, or a last chunk with none) and passes. Streams that record
// each chunk's tokens, and sources without gaps, are not judged.
func (r *Recording) noteTokenCounts() {
	if r.NoGaps {
		return
	}
	more, fewer, most := 0, 0, 0.0
	for i := range r.Streams {
		s := &r.Streams[i]
		if s.ChunkTokens != nil || s.Chunks == 0 {
			continue
		}
		switch {
		case s.OutputTokens > s.Chunks+1:
			more++
			most = max(most, float64(s.OutputTokens)/float64(s.Chunks))
		case s.OutputTokens < s.Chunks-1:
			fewer++
		}
	}
	streams := func(n int) string {
		if n == 1 {
			return "1 stream records"
		}
		return fmt.Sprintf("%d streams record", n)
	}
	if more > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s more output tokens than chunks (up to %.3g tokens a chunk): TPOT divides by tokens, so it is below those streams' gaps", streams(more), most))
	}
	if fewer > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s fewer output tokens than chunks: chunks without a token, or wrong token counts", streams(fewer)))
	}
}

// fail counts one failed request.
func (r *Recording) fail(kind string) {
	if r.Failed == nil {
		r.Failed = map[string]int{}
	}
	r.Failed[kind]++
}

// Histogram resolutions of the simulator's results (sim/result.go): the
// pooled histogram is kept for consumers that merge results; per-position
// and time-series histograms feed the same JSON as a simulation's.
const (
	pooledBits = 10
	seriesBits = 6
	maxBuckets = 1024
)

// ChunkTokens is the tokens of chunk c of n of s: as recorded, or the
// output spread evenly (earlier chunks take the remainder) when the source
// records no split, at least one each.
func ChunkTokens(s *Stream, c, n int) int {
	if s.ChunkTokens != nil && c < len(s.ChunkTokens) {
		return max(s.ChunkTokens[c], 1)
	}
	if s.OutputTokens <= n {
		return 1
	}
	q, rem := s.OutputTokens/n, s.OutputTokens%n
	if c < rem {
		return q + 1
	}
	return q
}

// Result turns the recording into a sim.Result judged by the thresholds in
// m (the stall threshold counts stalls; WorstStreams and
// TimeseriesIntervalS shape the report), with its exact times in
// Result.Measured for reports.Summarize. Stalls have no causes: a client
// sees that a gap was long, not why.
func (r *Recording) Result(m sim.MetricsConfig) *sim.Result {
	res := &sim.Result{
		Name:     r.Name,
		Pooled:   quantile.NewHistogram(pooledBits),
		Requests: len(r.Streams),
		Finished: len(r.Streams),
		Duration: toTime(r.Duration),
		WorstK:   m.WorstStreams,
		Measured: &sim.Measured{NoGaps: r.NoGaps, Failed: map[string]int{}},
	}
	for i := range res.Position {
		res.Position[i] = quantile.NewHistogram(seriesBits)
	}
	for k, n := range r.Failed {
		res.Measured.Failed[k] = n
		res.Requests += n
	}
	for why, n := range r.Rejected {
		res.Rejected[why] += n
		res.Requests += n
	}

	stall := float64(sim.FromMS(m.StallThresholdMS))
	q := m.QoE
	if q == (sim.QoE{}) {
		q = sim.DefaultQoE()
	}
	exp := qoe.Expectation{TTFT: q.ExpectedTTFTMS * 1e6, TokensPerS: q.TokensPerS}
	var at []float64
	var toks []int
	res.Measured.Streams = make([]sim.MeasuredStream, len(r.Streams))
	sorted := []float64{}
	for i := range r.Streams {
		s := &r.Streams[i]
		st := sim.StreamSummary{
			ID: s.ID, Arrival: toTime(s.Arrival), InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
			Status: sim.StatusFinished, TTFT: toTime(s.TTFT), E2EL: toTime(s.E2EL), Chunks: s.Chunks,
		}
		ms := sim.MeasuredStream{TTFT: s.TTFT, E2EL: s.E2EL, Gaps: s.Gaps}
		if !r.NoGaps {
			st.Chunks = len(s.Gaps) + 1
		}
		if len(s.Gaps) > 0 {
			sorted = append(sorted[:0], s.Gaps...)
			slices.Sort(sorted)
			var sum float64
			for j, g := range s.Gaps {
				sum += g
				res.Pooled.Record(int64(math.Round(g)))
				res.Position[min(sim.PositionBuckets-1, bits.Len(uint(j+1))-1)].Record(int64(math.Round(g)))
				if g > stall {
					st.Stalls++
					st.StallTime += toTime(g)
				}
			}
			ms.GapMax = sorted[len(sorted)-1]
			st.GapMean = sum / float64(len(sorted))
			st.GapP50 = quantile.Linear(sorted, 0.50)
			st.GapP90 = quantile.Linear(sorted, 0.90)
			st.GapP99 = quantile.Linear(sorted, 0.99)
			st.GapMax = toTime(ms.GapMax)
		}
		if !r.NoGaps {
			// Perceived scores from the chunk times (tokens per chunk as
			// recorded, else the output spread evenly over the chunks).
			at, toks = at[:0], toks[:0]
			t := s.TTFT
			for c := range len(s.Gaps) + 1 {
				if c > 0 {
					t += s.Gaps[c-1]
				}
				at = append(at, t)
				toks = append(toks, ChunkTokens(s, c, len(s.Gaps)+1))
			}
			if sc, ok := qoe.Score(exp, at, toks); ok {
				st.Scored, st.QoE, st.Fluidity, st.FluidRate = true, float32(sc.QoE), float32(sc.Fluidity), float32(sc.FluidRate)
			}
		}
		res.Streams.Append(st)
		res.Measured.Streams[i] = ms
		res.InputTokens += int64(s.InputTokens)
		res.OutputTokens += int64(s.OutputTokens)
	}
	for i := range r.FailedStreams {
		s := &r.FailedStreams[i]
		st := sim.StreamSummary{ID: s.ID, Arrival: toTime(s.Arrival), InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
			Status: sim.StatusFailed, TTFT: toTime(s.TTFT), E2EL: toTime(s.E2EL), Chunks: len(s.Gaps) + 1}
		for _, g := range s.Gaps {
			if g > stall {
				st.Stalls++
				st.StallTime += toTime(g)
			}
		}
		res.Streams.Append(st)
		res.Measured.Streams = append(res.Measured.Streams, sim.MeasuredStream{TTFT: s.TTFT, E2EL: s.E2EL, Gaps: s.Gaps})
		res.OutputTokens += int64(s.OutputTokens)
	}
	if !r.NoGaps {
		res.Worst = r.worst(m)
	}
	res.Series = r.series(m)
	// Rejected requests are rows of the result, as a simulation's are (the
	// JSON's streams, the gate's resampling); they have no times.
	for _, q := range r.Refused {
		res.Streams.Append(sim.StreamSummary{ID: q.ID, Arrival: toTime(q.Arrival), InputTokens: q.InputTokens,
			Status: sim.StatusRejected, Reject: q.Reason})
		res.Measured.Streams = append(res.Measured.Streams, sim.MeasuredStream{})
	}
	return res
}

func toTime(ns float64) sim.Time { return sim.Time(math.Round(ns)) }

// worst keeps the m.WorstStreams streams with the largest gap, larger gap
// first, then lower id, as the simulator chooses them.
func (r *Recording) worst(m sim.MetricsConfig) []sim.WorstStream {
	k := m.WorstStreams
	if k <= 0 {
		return nil
	}
	maxGap := make([]float64, len(r.Streams))
	idx := make([]int, len(r.Streams))
	for i := range r.Streams {
		idx[i] = i
		if g := r.Streams[i].Gaps; len(g) > 0 {
			maxGap[i] = slices.Max(g)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(maxGap[b], maxGap[a]); c != 0 {
			return c
		}
		return cmp.Compare(r.Streams[a].ID, r.Streams[b].ID)
	})
	stall := float64(sim.FromMS(m.StallThresholdMS))
	var out []sim.WorstStream
	for _, i := range idx[:min(k, len(idx))] {
		s := &r.Streams[i]
		w := sim.WorstStream{ID: s.ID, Arrival: toTime(s.Arrival), MaxGap: toTime(maxGap[i]),
			ChunkTimes: make([]sim.Time, 0, len(s.Gaps)+1), ChunkTokens: []int{}}
		at := s.Arrival + s.TTFT
		w.ChunkTimes = append(w.ChunkTimes, toTime(at))
		for j, g := range s.Gaps {
			at += g
			w.ChunkTimes = append(w.ChunkTimes, toTime(at))
			if g > stall {
				// A client sees that a gap was long, not why: no parts.
				w.Stalls = append(w.Stalls, sim.Stall{Index: j + 1, Gap: toTime(g)})
			}
		}
		if s.ChunkTokens != nil {
			w.ChunkTokens = slices.Clone(s.ChunkTokens)
		}
		out = append(out, w)
	}
	return out
}

// series builds the time series a simulation reports, from what a client
// sees: waiting is requests sent but not yet answered (queueing and
// prefill), running is streams between their first and last chunk; output
// tokens, finished streams and ITL count at the time they became visible.
// Without arrival times there is none.
func (r *Recording) series(m sim.MetricsConfig) sim.Series {
	if r.NoArrivals || r.Duration <= 0 {
		return sim.Series{}
	}
	iv := m.TimeseriesIntervalS * 1e9
	if !(iv >= 1) { // also NaN
		iv = 1e9
	}
	for r.Duration/iv >= maxBuckets {
		iv *= 2
	}
	ivT := toTime(iv)
	n := int(r.Duration/float64(ivT)) + 1
	s := sim.Series{Interval: ivT, Buckets: make([]sim.Bucket, n)}
	for i := range s.Buckets {
		s.Buckets[i] = sim.Bucket{Start: sim.Time(i) * ivT, ITL: quantile.NewHistogram(seriesBits)}
	}
	w := float64(ivT)
	at := func(t float64) *sim.Bucket { return &s.Buckets[min(n-1, max(0, int(t/w)))] }
	// spread adds the interval [a, b) to every bucket it overlaps.
	spread := func(a, b float64, add func(bk *sim.Bucket, ns float64)) {
		for i := max(0, int(a/w)); i < n && float64(i)*w < b; i++ {
			lo, hi := max(a, float64(i)*w), min(b, float64(i+1)*w)
			if hi > lo {
				add(&s.Buckets[i], hi-lo)
			}
		}
	}
	for i := range r.Streams {
		st := &r.Streams[i]
		first, last := st.Arrival+st.TTFT, st.Arrival+st.E2EL
		spread(st.Arrival, first, func(bk *sim.Bucket, ns float64) { bk.WaitingNS += ns })
		spread(first, last, func(bk *sim.Bucket, ns float64) { bk.RunningNS += ns })
		at(last).Finished++
		if r.NoGaps {
			at(last).OutputTokens += int64(st.OutputTokens)
			continue
		}
		t := first
		tokens := func(j int) int64 {
			if st.ChunkTokens != nil {
				return int64(st.ChunkTokens[j])
			}
			if j == len(st.Gaps) { // unknown split: the rest with the last chunk
				return int64(max(0, st.OutputTokens-len(st.Gaps)))
			}
			return 1
		}
		at(t).OutputTokens += tokens(0)
		for j, g := range st.Gaps {
			t += g
			bk := at(t)
			bk.OutputTokens += tokens(j + 1)
			bk.ITL.Record(int64(math.Round(g)))
		}
	}
	return s
}
