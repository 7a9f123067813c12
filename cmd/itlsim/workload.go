package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/quantile"
	"github.com/itlsim/itlsim/sim/scenario"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

func newWorkloadCmd(temps *tempFiles) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Inspect a trace or a scenario's workload, or write it as a trace",
	}
	cmd.AddCommand(newWorkloadInspectCmd(), newWorkloadGenerateCmd(temps))
	return cmd
}

// sourceOptions are the flags that say which requests a workload command
// reads: a trace file or a scenario's workload, transformed.
type sourceOptions struct {
	format     string // --workload-format (or its old spelling --format)
	seed       string
	timeScale  string
	window     string
	sample     string
	targetRate string
	capTokens  string
	sets       []string
}

func (o *sourceOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.format, "workload-format", "", "trace format: "+strings.Join(workloads.Formats(), ", ")+" (default: detected from the file)")
	// The old spelling: --format names stdout's form in run, gate, analyze
	// and replay, so a trace's format is --workload-format, as in run.
	f.StringVar(&o.format, "format", "", "the old spelling of --workload-format")
	_ = f.MarkHidden("format")
	d := sim.DefaultConfig()
	bindField(f, &o.seed, "seed", "seed", "seed of the generated or sampled requests (a scenario's own by default)", d)
	bindField(f, &o.timeScale, "time-scale", "workload.time_scale", "divide arrival times by this (2 replays twice as fast; 0: as recorded)", d)
	bindField(f, &o.window, "window", "workload.window_s", "keep requests arriving in START,END seconds of the source, shifted to start at 0", d)
	bindField(f, &o.sample, "sample", "workload.sample", "keep each request with this probability (0: all)", d)
	bindField(f, &o.targetRate, "target-rate", "workload.target_rate", "rescale time to this mean rate, requests/s (0: off)", d)
	bindField(f, &o.capTokens, "cap-tokens", "workload.cap_tokens", "cap prompt + output at this many tokens (0: no cap)", d)
	f.StringArrayVar(&o.sets, "set", nil, "set any scenario field: path=value (repeatable), e.g. --set workload.rate=8")
}

// open returns the requests of source — a scenario file (.yaml, .yml) or a
// trace — exactly as `itlsim run` would simulate them: the same resolved
// configuration and the same workload seed.
func (o *sourceOptions) open(cmd *cobra.Command, source string) (workloads.Source, sim.Config, error) {
	cfg, err := o.config(cmd, source)
	if err != nil {
		return nil, cfg, err
	}
	src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
	if err != nil {
		return nil, cfg, err
	}
	return src, cfg, nil
}

// config returns the resolved configuration whose workload open reads,
// without reading the workload's files.
func (o *sourceOptions) config(cmd *cobra.Command, source string) (sim.Config, error) {
	cfg := sim.DefaultConfig()
	isScenario := false
	switch strings.ToLower(filepath.Ext(source)) {
	case ".yaml", ".yml":
		isScenario = true
		data, err := os.ReadFile(source)
		if err != nil {
			return cfg, err
		}
		f, err := scenario.Parse(source, data)
		if err != nil {
			return cfg, err
		}
		cfg = f.Config
		// Files a scenario names are relative to the scenario.
		dir := filepath.Dir(source)
		cfg.Workload = cfg.Workload.ResolvePaths(dir)
		if m := cfg.Model; strings.HasSuffix(m, ".json") && !filepath.IsAbs(m) {
			cfg.Model = filepath.Join(dir, m)
		}
	default:
		cfg.Workload.Trace = source
	}
	flagName := "workload-format"
	if cmd.Flags().Changed("format") {
		if cmd.Flags().Changed("workload-format") {
			return cfg, fmt.Errorf("--format is the old spelling of --workload-format: give one of them")
		}
		flagName = "format"
		fmt.Fprintf(cmd.ErrOrStderr(), "itlsim: note: --format %s is spelled --workload-format %s now (as in run; --format names stdout's form)\n", o.format, o.format)
	}
	for _, s := range []struct{ flag, path, value string }{
		{flagName, "workload.format", o.format},
		{"seed", "seed", o.seed},
		{"time-scale", "workload.time_scale", o.timeScale},
		{"window", "workload.window_s", o.window},
		{"sample", "workload.sample", o.sample},
		{"target-rate", "workload.target_rate", o.targetRate},
		{"cap-tokens", "workload.cap_tokens", o.capTokens},
	} {
		if !cmd.Flags().Changed(s.flag) {
			continue
		}
		if s.flag == flagName && isScenario && cfg.Workload.Trace == "" {
			return cfg, fmt.Errorf("--%s: %s generates its requests; --%s applies to a trace", flagName, source, flagName)
		}
		if err := scenario.Set(&cfg, s.path, s.value); err != nil {
			return cfg, fmt.Errorf("--%s: %w", s.flag, err)
		}
	}
	if err := scenario.ApplySets(&cfg, o.sets); err != nil {
		return cfg, err
	}
	cfg.Files = hostFS{}
	setup, err := cfg.Resolve()
	if err != nil {
		return cfg, err
	}
	return setup.Config, nil
}

func newWorkloadInspectCmd() *cobra.Command {
	var o sourceOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect SOURCE",
		Short: "Print a workload's count, duration, rate, burstiness and length percentiles",
		Long: `Print what a workload holds: the number of requests, the span of their
arrivals, the mean rate, the burstiness (coefficient of variation of the
inter-arrival gaps: 0 evenly spaced, 1 Poisson, above 1 bursty) and the
percentiles of prompt and output lengths, per class when the requests have
classes, and the prefix block ids they carry.

SOURCE is a trace (its format detected from its name and first line, or
given with --workload-format) or a scenario file (.yaml), whose workload is generated
exactly as 'itlsim run' would generate it. The transformation flags apply to
either:

  itlsim workload inspect ../shared/data/traces/AzureLLMInferenceTrace_conv_2023.csv
  itlsim workload inspect trace.jsonl --window 600,1200 --time-scale 2
  itlsim workload inspect scenario.yaml --set workload.rate=8`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, cfg, err := o.open(cmd, args[0])
			if err != nil {
				return err
			}
			s, err := summarize(src)
			if err != nil {
				return err
			}
			s.Source, s.SchemaVersion = args[0], reports.SchemaVersion
			s.Format = cfg.Workload.Format
			if cfg.Workload.Trace != "" && s.Format == "" {
				s.Format, _ = workloads.DetectFormat(cfg.Workload.Trace)
			}
			if s.Format == "" {
				s.Format = "generated"
			}
			if err := s.describeLengthsFile(cfg.Workload); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			return s.write(cmd.OutOrStdout())
		},
	}
	o.bind(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}

func newWorkloadGenerateCmd(temps *tempFiles) *cobra.Command {
	var o sourceOptions
	var out string
	cmd := &cobra.Command{
		Use:   "generate SOURCE -o FILE",
		Short: "Write a scenario's workload (or a transformed trace) as a trace in itlsim's request format",
		Long: `Write the requests of SOURCE — a scenario file's generated workload, or a
trace — to FILE in itlsim's request format: JSON lines, or CSV when FILE
ends in .csv. The file replays with 'itlsim run --workload FILE' to the same
requests (arrivals to the nanosecond, lengths, classes, priorities, prefix
block ids). The file is written to a temporary name and renamed, so a failed
run leaves no partial file.

  itlsim workload generate scenario.yaml -o requests.jsonl
  itlsim workload generate mooncake.jsonl --window 0,600 -o first-10-minutes.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o FILE: required")
			}
			files := newOutputs(temps)
			defer files.discard()
			file := files.add("-o", out)
			cfg, err := o.config(cmd, args[0])
			if err != nil {
				return err
			}
			files.reads("SOURCE", args[0])
			readsConfig(files, cfg)
			if err := files.check(); err != nil {
				return err
			}
			src, err := workloads.New(cfg.Workload, seed.Derive(cfg.Seed, "workload"))
			if err != nil {
				return err
			}
			var n int
			err = file.write(func(f *os.File) error {
				var werr error
				n, werr = workloads.WriteRequests(workloads.NewRequestWriterFor(f, out), src)
				return werr
			})
			if err != nil {
				return err
			}
			if err := files.commit(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d requests to %s\n", n, out)
			return nil
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (.jsonl, or .csv for CSV)")
	return cmd
}

// workloadSummary is what inspect prints. Times are seconds.
type workloadSummary struct {
	// SchemaVersion is reports.SchemaVersion.
	SchemaVersion int     `json:"schema_version"`
	Source        string  `json:"source"`
	Format        string  `json:"format"`
	Requests      int     `json:"requests"`
	DurationS     float64 `json:"duration_s"` // last arrival − first arrival
	// RatePerS is (requests − 1) / duration: the mean rate of the arrivals.
	RatePerS float64 `json:"rate_per_s"`
	// GapCV is the coefficient of variation of inter-arrival gaps.
	GapCV   float64        `json:"gap_cv"`
	Input   lengthSummary  `json:"input_tokens"`
	Output  lengthSummary  `json:"output_tokens"`
	Classes []classSummary `json:"classes,omitempty"`
	Prefix  *prefixSummary `json:"prefix_blocks,omitempty"`
	// File describes a length-only file (a lengths trace or lengths_file),
	// which holds no arrival times: the figures above are of the requests
	// generated from it, which Generated describes.
	File      *lengthsFileSummary `json:"file,omitempty"`
	Generated string              `json:"generated,omitempty"`
	// ExpectedReuse is, for a workload with shared prefixes or
	// conversations, the share of prompt tokens an unbounded prefix cache of
	// 16-token blocks would serve (what automatic prefix caching reuses at
	// best); absent otherwise.
	ExpectedReuse *float64 `json:"expected_reuse,omitempty"`
}

// lengthsFileSummary is what a length-only file holds.
type lengthsFileSummary struct {
	Pairs  int           `json:"pairs"`
	Input  lengthSummary `json:"input_tokens"`
	Output lengthSummary `json:"output_tokens"`
}

// describeLengthsFile fills File and Generated when the workload draws its
// lengths from a length-only file.
func (s *workloadSummary) describeLengthsFile(w workloads.Config) error {
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
	in, out := make([]int64, l.Len()), make([]int64, l.Len())
	for i := range l.Len() {
		a, b := l.At(i)
		in[i], out[i] = int64(a), int64(b)
	}
	s.File = &lengthsFileSummary{Pairs: l.Len(), Input: lengthsOf(in), Output: lengthsOf(out)}
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

type lengthSummary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  int64   `json:"max"`
}

type classSummary struct {
	Class    string        `json:"class"`
	Requests int           `json:"requests"`
	Input    lengthSummary `json:"input_tokens"`
	Output   lengthSummary `json:"output_tokens"`
}

type prefixSummary struct {
	Requests    int `json:"requests"` // requests that carry ids
	Blocks      int `json:"blocks"`   // ids in all
	Distinct    int `json:"distinct"`
	BlockTokens int `json:"block_tokens"` // the most common block size
	// SeenBefore is the share of ids that an earlier request already
	// carried: for chained ids (Mooncake's), the prompt share an unbounded
	// prefix cache could serve.
	SeenBefore float64 `json:"seen_before"`
}

// summarize drains src. It keeps every length (twice: overall and per
// class, 8 bytes each) to compute exact percentiles, and the set of
// distinct prefix block ids.
func summarize(src workloads.Source) (*workloadSummary, error) {
	s := &workloadSummary{}
	var in, out []int64
	byClass := map[string]*[2][]int64{}
	var first, prev int64
	var gapSum, gapSumSq float64
	seen := map[uint64]struct{}{}
	var prefix prefixSummary
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
			s.Classes = append(s.Classes, classSummary{Class: name, Requests: len(c[0]), Input: lengthsOf(c[0]), Output: lengthsOf(c[1])})
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

func lengthsOf(v []int64) lengthSummary {
	slices.Sort(v)
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return lengthSummary{
		Mean: sum / float64(len(v)),
		P50:  quantile.Linear(v, 0.50),
		P90:  quantile.Linear(v, 0.90),
		P99:  quantile.Linear(v, 0.99),
		Max:  v[len(v)-1],
	}
}

func (s *workloadSummary) write(w io.Writer) error {
	var b strings.Builder
	f1 := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	fmt.Fprintf(&b, "source      %s (%s)\n", reports.Printable(s.Source), s.Format)
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
	add := func(label string, l lengthSummary) {
		rows = append(rows, []string{label, f1(l.Mean), f1(l.P50), f1(l.P90), f1(l.P99), strconv.FormatInt(l.Max, 10)})
	}
	if f := s.File; f != nil {
		add("file input", f.Input)
		add("file output", f.Output)
	}
	add("input", s.Input)
	add("output", s.Output)
	for _, c := range s.Classes {
		name := reports.Printable(c.Class)
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
