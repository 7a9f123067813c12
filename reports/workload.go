package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/sim/quantile"
	"github.com/itlsim/itlsim/workloads"
)

// WorkloadSummary is what itlsim workload inspect prints. Times are seconds.
type WorkloadSummary struct {
	// SchemaVersion is the JSON schema version, SchemaVersion.
	SchemaVersion int     `json:"schema_version"`
	Source        string  `json:"source"`
	Format        string  `json:"format"`
	Requests      int     `json:"requests"`
	DurationS     float64 `json:"duration_s"` // last arrival − first arrival
	// RatePerS is (requests − 1) / duration: the mean rate of the arrivals.
	RatePerS float64 `json:"rate_per_s"`
	// GapCV is the coefficient of variation of inter-arrival gaps.
	GapCV   float64         `json:"gap_cv"`
	Input   WorkloadLengths `json:"input_tokens"`
	Output  WorkloadLengths `json:"output_tokens"`
	Classes []WorkloadClass `json:"classes,omitempty"`
	Prefix  *WorkloadPrefix `json:"prefix_blocks,omitempty"`
	// File describes a length-only file (a lengths trace or lengths_file),
	// which holds no arrival times: the figures above are of the requests
	// generated from it, which Generated describes.
	File      *WorkloadLengthsFile `json:"file,omitempty"`
	Generated string               `json:"generated,omitempty"`
	// ExpectedReuse is, for a workload with shared prefixes or
	// conversations, the share of prompt tokens an unbounded prefix cache of
	// 16-token blocks would serve (what automatic prefix caching reuses at
	// best); absent otherwise.
	ExpectedReuse *float64 `json:"expected_reuse,omitempty"`
}

// InspectWorkload drains src, the requests of workload w read from source
// (a trace or a scenario file), and summarizes them: its format (the
// trace's, detected when w does not name it, or "generated") and, when the
// lengths come from a length-only file, that file's pairs.
func InspectWorkload(source string, src workloads.Source, w workloads.Config) (*WorkloadSummary, error) {
	s, err := summarizeWorkload(src)
	if err != nil {
		return nil, err
	}
	s.Source, s.SchemaVersion = source, SchemaVersion
	s.Format = w.Format
	if w.Trace != "" && s.Format == "" {
		s.Format, _ = workloads.DetectFormat(w.Trace)
	}
	if s.Format == "" {
		s.Format = "generated"
	}
	if err := s.describeLengthsFile(w); err != nil {
		return nil, err
	}
	return s, nil
}

// WorkloadLengthsFile is what a length-only file holds.
type WorkloadLengthsFile struct {
	Pairs  int             `json:"pairs"`
	Input  WorkloadLengths `json:"input_tokens"`
	Output WorkloadLengths `json:"output_tokens"`
}

// describeLengthsFile fills File and Generated when the workload draws its
// lengths from a length-only file.
func (s *WorkloadSummary) describeLengthsFile(w workloads.Config) error {
	path := w.LengthsFile
	if w.Trace != "" && s.Format == workloads.FormatLengths {
		path = w.Trace
	}
	if path == "" {
		return nil
	}
	l, err := workloads.ReadLengths(path)
	if err != nil {
		return err
	}
	if path == w.LengthsFile {
		if l, err = l.Filter(path, w.LengthsFilter); err != nil {
			return err
		}
	}
	in, out := make([]int64, l.Len()), make([]int64, l.Len())
	for i := range l.Len() {
		a, b := l.At(i)
		in[i], out[i] = int64(a), int64(b)
	}
	s.File = &WorkloadLengthsFile{Pairs: l.Len(), Input: lengthsOf(in), Output: lengthsOf(out)}
	arrival := w.Arrival
	if arrival == "" {
		arrival = workloads.ArrivalPoisson
	}
	bound := fmt.Sprintf("%d requests", w.Requests)
	if w.Requests == 0 {
		bound = fmt.Sprintf("%g s of requests", w.DurationS)
	}
	s.Generated = fmt.Sprintf("%s, %s arrivals at %g/s, each drawing one of the file's pairs at random (set by workload.requests or duration_s, arrival, rate)",
		bound, arrival, w.Rate)
	return nil
}

// WorkloadLengths are the mean, percentiles and maximum of token counts.
type WorkloadLengths struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  int64   `json:"max"`
}

// WorkloadClass are the lengths of one traffic class's requests.
type WorkloadClass struct {
	Class    string          `json:"class"`
	Requests int             `json:"requests"`
	Input    WorkloadLengths `json:"input_tokens"`
	Output   WorkloadLengths `json:"output_tokens"`
}

// WorkloadPrefix describes the prefix block ids the requests carry.
type WorkloadPrefix struct {
	Requests    int `json:"requests"` // requests that carry ids
	Blocks      int `json:"blocks"`   // ids in all
	Distinct    int `json:"distinct"`
	BlockTokens int `json:"block_tokens"` // the most common block size
	// SeenBefore is the share of ids that an earlier request already
	// carried: for chained ids (Mooncake's), the prompt share an unbounded
	// prefix cache could serve.
	SeenBefore float64 `json:"seen_before"`
}

// summarizeWorkload drains src. It keeps every length (twice: overall and per
// class, 8 bytes each) to compute exact percentiles, and the set of
// distinct prefix block ids.
func summarizeWorkload(src workloads.Source) (*WorkloadSummary, error) {
	s := &WorkloadSummary{}
	var in, out []int64
	byClass := map[string]*[2][]int64{}
	var first, prev int64
	var gapSum, gapSumSq float64
	seen := map[uint64]struct{}{}
	var prefix WorkloadPrefix
	blockSizes := map[int]int{}
	var repeated int
	contentSeen := map[uint64]struct{}{}
	var reuseQueried, reuseHit, promptTokens int64
	var r workloads.Request
	for src.Next(&r) {
		promptTokens += int64(r.InputTokens)
		if r.SharedTokens > 0 || r.ContentKey != 0 {
			q, h := expectedReuse(&r, contentSeen)
			reuseQueried += q
			reuseHit += h
		}
		if s.Requests == 0 {
			first = r.Arrival
		} else {
			g := float64(r.Arrival-prev) / 1e9
			gapSum += g
			gapSumSq += g * g
		}
		prev = r.Arrival
		s.Requests++
		in = append(in, int64(r.InputTokens))
		out = append(out, int64(r.OutputTokens))
		c := byClass[r.Class]
		if c == nil {
			c = &[2][]int64{}
			byClass[r.Class] = c
		}
		c[0] = append(c[0], int64(r.InputTokens))
		c[1] = append(c[1], int64(r.OutputTokens))
		if len(r.PrefixBlocks) > 0 {
			prefix.Requests++
			prefix.Blocks += len(r.PrefixBlocks)
			blockSizes[r.PrefixBlockTokens]++
			for _, id := range r.PrefixBlocks {
				if _, ok := seen[id]; ok {
					repeated++
				} else {
					seen[id] = struct{}{}
				}
			}
		}
	}
	if err := workloads.Err(src); err != nil {
		return nil, err
	}
	if s.Requests == 0 {
		return nil, fmt.Errorf("the workload has no requests")
	}
	s.DurationS = float64(prev-first) / 1e9
	if s.Requests > 1 && s.DurationS > 0 {
		s.RatePerS = float64(s.Requests-1) / s.DurationS
		n := float64(s.Requests - 1)
		mean := gapSum / n
		s.GapCV = math.Sqrt(max(0, gapSumSq/n-mean*mean)) / mean
	}
	s.Input, s.Output = lengthsOf(in), lengthsOf(out)
	if _, unnamed := byClass[""]; len(byClass) > 1 || !unnamed {
		names := make([]string, 0, len(byClass))
		for name := range byClass {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			c := byClass[name]
			s.Classes = append(s.Classes, WorkloadClass{Class: name, Requests: len(c[0]), Input: lengthsOf(c[0]), Output: lengthsOf(c[1])})
		}
	}
	if prefix.Requests > 0 {
		prefix.Distinct = len(seen)
		prefix.SeenBefore = float64(repeated) / float64(prefix.Blocks)
		best := 0
		for size, n := range blockSizes {
			if n > best || (n == best && size < prefix.BlockTokens) {
				prefix.BlockTokens, best = size, n
			}
		}
		s.Prefix = &prefix
	}
	if reuseQueried > 0 {
		v := float64(reuseHit) / float64(promptTokens)
		s.ExpectedReuse = &v
	}
	return s, nil
}

// reuseBlock is the block size expectedReuse assumes (vLLM's default).
const reuseBlock = 16

// expectedReuse looks r's prompt up in an unbounded cache of the content
// ids seen (seen), as a starting request does, then caches every full
// block of its prompt and output; it returns the prompt tokens looked up
// and found.
func expectedReuse(r *workloads.Request, seen map[uint64]struct{}) (queried, hit int64) {
	c := kvcache.Content{Units: r.PrefixBlocks, UnitTokens: r.PrefixBlockTokens, Prompt: r.InputTokens,
		SharedKey: r.SharedKey, SharedTokens: r.SharedTokens, Key: r.Key(), OutKey: r.OutputKey}
	j := 0
	for (j+1)*reuseBlock <= r.InputTokens-1 {
		if _, ok := seen[c.Block(j, reuseBlock)]; !ok {
			break
		}
		j++
	}
	for k := 0; (k+1)*reuseBlock <= r.InputTokens+r.OutputTokens; k++ {
		seen[c.Block(k, reuseBlock)] = struct{}{}
	}
	return int64(r.InputTokens), int64(j * reuseBlock)
}

func lengthsOf(v []int64) WorkloadLengths {
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return WorkloadLengths{
		Mean: sum / float64(len(v)),
		P50:  quantile.Linear(v, 0.50),
		P90:  quantile.Linear(v, 0.90),
		P99:  quantile.Linear(v, 0.99),
		Max:  v[len(v)-1],
	}
}

// Write prints s as itlsim workload inspect does: the figures, then a
// table of length percentiles overall, of a length-only file and per class.
func (s *WorkloadSummary) Write(w io.Writer) error {
	var b strings.Builder
	f1 := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	fmt.Fprintf(&b, "source      %s (%s)\n", Printable(s.Source), s.Format)
	if f := s.File; f != nil {
		fmt.Fprintf(&b, "file        %d length pairs (prompt, output tokens), no arrival times\n", f.Pairs)
		fmt.Fprintf(&b, "generated   %s; the figures below are of those requests\n", s.Generated)
	}
	fmt.Fprintf(&b, "requests    %d\n", s.Requests)
	fmt.Fprintf(&b, "duration    %.1f s (first to last arrival)\n", s.DurationS)
	fmt.Fprintf(&b, "rate        %.3f requests/s\n", s.RatePerS)
	fmt.Fprintf(&b, "burstiness  %.2f (CV of inter-arrival gaps: 0 even, 1 Poisson)\n", s.GapCV)
	if v := s.ExpectedReuse; v != nil {
		fmt.Fprintf(&b, "reuse       %.1f%% of prompt tokens an unbounded prefix cache would serve (shared prefixes, earlier turns)\n", 100**v)
	}
	if p := s.Prefix; p != nil {
		fmt.Fprintf(&b, "prefix      %d requests carry %d block ids of %d tokens, %d distinct; %.1f%% were seen before\n",
			p.Requests, p.Blocks, p.BlockTokens, p.Distinct, 100*p.SeenBefore)
	}
	b.WriteString("\n")
	rows := [][]string{{"tokens", "mean", "p50", "p90", "p99", "max"}}
	add := func(label string, l WorkloadLengths) {
		rows = append(rows, []string{label, f1(l.Mean), f1(l.P50), f1(l.P90), f1(l.P99), strconv.FormatInt(l.Max, 10)})
	}
	if f := s.File; f != nil {
		add("file input", f.Input)
		add("file output", f.Output)
	}
	add("input", s.Input)
	add("output", s.Output)
	for _, c := range s.Classes {
		name := Printable(c.Class)
		if name == "" {
			name = "no class"
		}
		n := strconv.Itoa(c.Requests) + " requests"
		if c.Requests == 1 {
			n = "1 request"
		}
		add("input  "+name+" ("+n+")", c.Input)
		add("output "+name, c.Output)
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
