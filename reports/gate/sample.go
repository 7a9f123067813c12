package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/sim"
)

// Sample is one side of a gate: a run's streams, summarized under Metrics.
type Sample struct {
	// Name labels it in the report (a file, and a run when it holds several).
	Name string
	// Result holds one entry per request; Measured carries exact times.
	Result *sim.Result
	// Metrics are the thresholds it is judged by.
	Metrics sim.MetricsConfig
	// AllGaps is true when every gap of every stream is in
	// Result.Measured (stream files), so pooled ITL can be resampled.
	AllGaps bool
	// ClassSLO are the SLO limits of the result's classes (by index into
	// Result.ClassNames; see reports.Options).
	ClassSLO []sim.SLO
}

// Streams is the number of request rows the bootstrap resamples.
func (s *Sample) Streams() int { return s.Result.Streams.Len() }

// FromRun rebuilds a Sample from one run of an itlsim JSON document
// (`itlsim run --json`, or `itlsim analyze --json`): its per-stream rows
// ("streams") carry every per-stream figure the summary is made of. name
// labels it in errors and the report.
func FromRun(name string, run *reports.Run) (Sample, error) {
	if len(run.Streams) == 0 {
		if run.Summary.Requests > 0 {
			return Sample{}, fmt.Errorf("%s: run %q has a summary of %d requests but no per-stream rows (\"streams\"): "+
				"the gate's bootstrap resamples streams; write the document with itlsim run --json FILE (or --format json)",
				name, run.Name, run.Summary.Requests)
		}
		return Sample{}, fmt.Errorf("%s: run %q has no streams to compare", name, run.Name)
	}
	res := &sim.Result{
		Name:     run.Name,
		Duration: sim.Time(math.Round(run.Summary.DurationS * 1e9)),
		Measured: &sim.Measured{Streams: make([]sim.MeasuredStream, len(run.Streams)), NoGaps: run.Summary.GapsUnavailable},
	}
	if !(run.Summary.DurationS >= 0 && run.Summary.DurationS < 1e7) {
		return Sample{}, fmt.Errorf("%s: run %q: summary.duration_s %g: expected seconds in [0, 1e7)", name, run.Name, run.Summary.DurationS)
	}
	reasons := map[string]scheduler.Reason{}
	for r := range scheduler.NumReasons {
		reasons[r.String()] = r
	}
	i := 0 // the row's index in res.Streams
	for j := range run.Streams {
		row := &run.Streams[j]
		where := fmt.Sprintf("%s: run %q: streams[%d] (id %d)", name, run.Name, j, row.ID)
		if row.Status == "failed" {
			// A stream whose connection failed: counted with
			// summary.failed below, as a failed request, not a row.
			continue
		}
		st := sim.StreamSummary{ID: row.ID, InputTokens: row.InputTokens, OutputTokens: row.OutputTokens, Preemptions: row.Preemptions, Class: -1}
		if row.Class != "" {
			k := slices.Index(res.ClassNames, row.Class)
			if k < 0 {
				k = len(res.ClassNames)
				res.ClassNames = append(res.ClassNames, row.Class)
			}
			st.Class = int16(k)
		}
		if row.QoE != nil && row.Fluidity != nil {
			st.Scored, st.QoE, st.Fluidity = true, float32(*row.QoE), float32(*row.Fluidity)
			if row.FluidRate != nil {
				st.FluidRate = float32(*row.FluidRate)
			}
		}
		switch row.Status {
		case "finished":
			st.Status = sim.StatusFinished
			res.Finished++
		case "rejected":
			st.Status = sim.StatusRejected
			why, ok := reasons[row.RejectReason]
			if !ok {
				why = scheduler.ReasonNone
			}
			st.Reject = why
			res.Rejected[why]++
		default:
			return Sample{}, fmt.Errorf("%s: status %q: expected finished, rejected or failed", where, row.Status)
		}
		res.Requests++
		for _, v := range []struct {
			key string
			ms  float64
		}{
			{"arrival_s", row.ArrivalS * 1e3}, {"ttft_ms", row.TTFTMS}, {"e2el_ms", row.E2ELMS}, {"itl_mean_ms", row.ITLMeanMS},
			{"itl_p50_ms", row.ITLP50MS}, {"itl_p90_ms", row.ITLP90MS}, {"itl_p99_ms", row.ITLP99MS}, {"max_gap_ms", row.MaxGapMS},
			{"stall_ms", row.StallMS},
		} {
			if !(v.ms >= 0 && v.ms < 1e10) {
				return Sample{}, fmt.Errorf("%s: %s %g: expected a time ≥ 0", where, v.key, v.ms)
			}
		}
		if row.E2ELMS < row.TTFTMS || row.Chunks < 0 || row.Stalls < 0 || row.InputTokens < 0 || row.OutputTokens < 0 {
			return Sample{}, fmt.Errorf("%s: inconsistent row: e2el_ms %g < ttft_ms %g, or a negative count", where, row.E2ELMS, row.TTFTMS)
		}
		st.Arrival = sim.Time(math.Round(row.ArrivalS * 1e9))
		st.TTFT, st.E2EL = sim.Time(math.Round(row.TTFTMS*1e6)), sim.Time(math.Round(row.E2ELMS*1e6))
		st.Chunks, st.Stalls, st.StallTime = row.Chunks, row.Stalls, sim.Time(math.Round(row.StallMS*1e6))
		st.GapMean, st.GapP50, st.GapP90, st.GapP99 = row.ITLMeanMS*1e6, row.ITLP50MS*1e6, row.ITLP90MS*1e6, row.ITLP99MS*1e6
		st.GapMax = sim.Time(math.Round(row.MaxGapMS * 1e6))
		res.Streams.Append(st)
		if st.Status == sim.StatusFinished {
			res.Measured.Streams[i] = sim.MeasuredStream{TTFT: row.TTFTMS * 1e6, E2EL: row.E2ELMS * 1e6, GapMax: row.MaxGapMS * 1e6}
			res.InputTokens += int64(row.InputTokens)
			res.OutputTokens += int64(row.OutputTokens)
		}
		i++
	}
	res.Measured.Streams = res.Measured.Streams[:i]
	if n := run.Summary.Failed; n > 0 {
		res.Measured.Failed = map[string]int{}
		for k, v := range run.Summary.FailedByReason {
			res.Measured.Failed[k] = v
		}
		if len(res.Measured.Failed) == 0 {
			res.Measured.Failed["failed"] = n
		}
		for _, v := range res.Measured.Failed {
			res.Requests += v
		}
	}
	return Sample{Name: name, Result: res, Metrics: run.Config.Metrics, ClassSLO: reports.ClassSLOs(res, run.Config)}, nil
}

// ForClass returns the sample restricted to the streams of traffic class
// name (requests that failed without a stream carry no class and are left
// out); an error names the classes the sample has.
func (s Sample) ForClass(name string) (Sample, error) {
	k := slices.Index(s.Result.ClassNames, name)
	if k < 0 {
		if len(s.Result.ClassNames) == 0 {
			return Sample{}, fmt.Errorf("%s has no traffic classes (--class needs a --json result of a workload with classes)", s.Name)
		}
		return Sample{}, fmt.Errorf("--class %q: %s has classes %s", name, s.Name, strings.Join(s.Result.ClassNames, ", "))
	}
	src := s.Result
	res := &sim.Result{Name: src.Name, Duration: src.Duration, ClassNames: []string{name}, Series: src.Series}
	if src.Measured != nil {
		res.Measured = &sim.Measured{NoGaps: src.Measured.NoGaps}
	}
	for i, p := range src.Streams.All() {
		st := *p
		if int(st.Class) != k {
			continue
		}
		st.Class = 0
		res.Streams.Append(st)
		if src.Measured != nil && i < len(src.Measured.Streams) {
			res.Measured.Streams = append(res.Measured.Streams, src.Measured.Streams[i])
		}
		res.Requests++
		if st.Status == sim.StatusFinished {
			res.Finished++
			res.InputTokens += int64(st.InputTokens)
			res.OutputTokens += int64(st.OutputTokens)
		} else if st.Status == sim.StatusRejected {
			res.Rejected[st.Reject]++
		}
	}
	if res.Streams.Len() == 0 {
		return Sample{}, fmt.Errorf("%s has no streams of class %s", s.Name, name)
	}
	out := s
	out.Name = s.Name + " [class " + name + "]"
	out.Result = res
	out.ClassSLO = nil
	if k < len(s.ClassSLO) {
		out.ClassSLO = []sim.SLO{s.ClassSLO[k]}
	}
	return out, nil
}

// Judge evaluates SLO terms on the sample's summary: absolute mode
// (`itlsim gate --candidate B --slo TERM`), or beside a comparison.
func Judge(s Sample, terms []slo.Term) []reports.SLOOutcome {
	sum := reports.SummarizeWith(s.Result, s.Metrics, reports.Options{ClassSLO: s.ClassSLO})
	return slo.Evaluate(terms, &sum)
}

// Absolute judges the candidate alone by SLO terms: a release rule such
// as "P99 TTFT must stay under 500 ms" needs no baseline.
func Absolute(cand Sample, terms []slo.Term) (Report, error) {
	if len(terms) == 0 {
		return Report{}, fmt.Errorf("an absolute gate (no baseline) needs at least one --slo term")
	}
	if cand.Streams() == 0 {
		return Report{}, fmt.Errorf("%s has no streams to judge", cand.Name)
	}
	rep := Report{SchemaVersion: reports.SchemaVersion, Candidate: cand.Name, CandidateStreams: cand.Streams(), Pass: true, Rows: []Row{}}
	rep.SLO = Judge(cand, terms)
	rep.Settle()
	if sum := reports.SummarizeWith(cand.Result, cand.Metrics, reports.Options{ClassSLO: cand.ClassSLO}); sum.QoE.N > 0 {
		rep.QoE = &Perceived{Candidate: sum.QoE}
		rep.Fluidity = &Perceived{Candidate: sum.Fluidity}
	}
	return rep, nil
}
