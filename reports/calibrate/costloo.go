package calibrate

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// Leave-one-out over cost check's sources. The suites of `cost check` come
// from four independent sources; for each in turn, the roofline constants
// are fitted on the other three and the one left out is priced with them,
// so every error it reports is out of sample.

// CostSource is one independent source of cost check's measurements and
// the suites read from it.
type CostSource struct {
	Name   string
	Suites []string
	About  string
}

// CostSources are cost check's sources, in the order the hold-out visits
// them. The three kernel suites come from one benchmark run, and the vllm
// and serving suites from one vLLM benchmark file, so each group is one
// source.
var CostSources = []CostSource{
	{"blis-h100", []string{"kernels/gemm", "kernels/decode", "kernels/prefill"},
		"H100 kernel latencies (inference-sim bench_data): DeepGEMM fp8 GEMMs, FlashInfer decode and FlashAttention-3 prefill attention"},
	{"vidur-a100", []string{"layers"}, "Vidur's A100 per-layer linear operator times for Llama-3-8B at TP1"},
	{"sarathi", []string{"sarathi"}, "Sarathi-Serve's Table 2 step times for Yi-34B at TP2 on A100-80GB"},
	{"vllm-0.8.3", []string{"vllm", "serving"}, "vLLM 0.8.3 serving Llama-3.3-70B on 8x A100-40GB at 1 req/s (median ITL)"},
}

// CostFitCandidates are the roofline fields the hold-out fits when the
// sources it fits on can fix them (the rule of Identify, MaxStandardError);
// the others stay at their defaults. The roofline's other numbers
// (all_reduce_efficiency, MoE routing) are not fitted.
var CostFitCandidates = []string{
	"cost.roofline.compute_efficiency", "cost.roofline.memory_efficiency",
	"cost.roofline.kernel_overhead_us", "cost.roofline.attention_overhead_us",
	"cost.roofline.overhead_us", "cost.roofline.seq_overhead_us",
	"cost.roofline.all_reduce_latency_us", "cost.roofline.graph_kernel_overhead_us",
}

// CostDefaultsReadOff names, for each default of CostFitCandidates that
// was set from cost check's sources, the sources it was read off
// (docs/fidelity.md, "Out of sample: cost check's sources"): a fold that
// holds such a default while leaving one of them out is in sample for it,
// and the output says so.
var CostDefaultsReadOff = map[string][]string{
	"cost.roofline.compute_efficiency":    {"blis-h100", "vidur-a100"},
	"cost.roofline.memory_efficiency":     {"blis-h100", "vidur-a100"},
	"cost.roofline.kernel_overhead_us":    {"blis-h100", "vidur-a100", "vllm-0.8.3"},
	"cost.roofline.attention_overhead_us": {"blis-h100"},
	"cost.roofline.overhead_us":           {"vllm-0.8.3"},
}

// costFitEvals bounds each fit's loss evaluations, as FitRoofline does.
const costFitEvals = 4000

// CostHoldOut is one source checked out of sample.
type CostHoldOut struct {
	Source   string
	FittedOn []string
	// Fitted is the default roofline with the fields the other sources
	// fix (Identification) fitted to them.
	Fitted         cost.RooflineConfig
	Identification *Identification
	Loss           float64 // the fit's loss: Σ over the sources fitted on of their mean squared log ratio
	// Defaults and HeldOut are the source's rows priced with the default
	// roofline (in sample) and with Fitted (out of sample).
	Defaults, HeldOut []CheckRow
}

// loadedSource is a source's measurements read once: fit prices the rows
// a fit uses, eval every row of its suites.
type loadedSource struct {
	CostSource
	fit, eval pricer
}

// loadCostSources reads every source of CostSources from the data folder.
// The serving suite simulates a whole run per pricing, so it is evaluated
// but not fitted on; the fit takes that run through its vllm row. The
// sarathi suite's two step-shape rows compare the same hybrid step with the
// same measurement, so its fit counts that step once.
func loadCostSources(data string) ([]loadedSource, error) {
	kernels, err := loadKernels(data)
	if err != nil {
		return nil, err
	}
	layers, err := loadVidurMLP(data)
	if err != nil {
		return nil, err
	}
	sarathi, err := loadSarathiStepShape(data)
	if err != nil {
		return nil, err
	}
	sarathiFit := func(c cost.RooflineConfig) ([]CheckRow, error) {
		rows, err := sarathi(c)
		if err != nil {
			return nil, err
		}
		return rows[:3], nil
	}
	vllm, err := loadVLLMDecode(data)
	if err != nil {
		return nil, err
	}
	vllmEval := func(c cost.RooflineConfig) ([]CheckRow, error) {
		rows, err := vllm(c)
		if err != nil {
			return nil, err
		}
		s, err := checkServing(data, c)
		if err != nil {
			return nil, err
		}
		return append(rows, s), nil
	}
	prices := []struct{ fit, eval pricer }{{kernels, kernels}, {layers, layers}, {sarathiFit, sarathi}, {vllm, vllmEval}}
	out := make([]loadedSource, len(CostSources))
	for i, s := range CostSources {
		out[i] = loadedSource{CostSource: s, fit: prices[i].fit, eval: prices[i].eval}
	}
	return out, nil
}

// costResiduals are the log ratios of the fit rows of srcs priced with c.
// With perSource, each source's are divided by the square root of its row
// count: their sum of squares is then the sum over sources of each one's
// mean squared log ratio, so every source weighs the same in a fit however
// many rows it has.
func costResiduals(srcs []loadedSource, c cost.RooflineConfig, perSource bool) ([]float64, error) {
	var r []float64
	for _, s := range srcs {
		rows, err := s.fit(c)
		if err != nil {
			return nil, err
		}
		w := 1.0
		if perSource {
			w = 1 / math.Sqrt(float64(len(rows)))
		}
		for _, row := range rows {
			r = append(r, w*math.Log(row.Ratio))
		}
	}
	return r, nil
}

// rooflineField points at the field of c named by a cost.roofline path.
func rooflineField(c *cost.RooflineConfig, path string) (*float64, error) {
	switch path {
	case "cost.roofline.compute_efficiency":
		return &c.ComputeEfficiency, nil
	case "cost.roofline.memory_efficiency":
		return &c.MemoryEfficiency, nil
	case "cost.roofline.kernel_overhead_us":
		return &c.KernelOverheadUS, nil
	case "cost.roofline.attention_overhead_us":
		return &c.AttentionOverheadUS, nil
	case "cost.roofline.overhead_us":
		return &c.OverheadUS, nil
	case "cost.roofline.seq_overhead_us":
		return &c.SeqOverheadUS, nil
	case "cost.roofline.all_reduce_latency_us":
		return &c.AllReduceLatencyUS, nil
	case "cost.roofline.graph_kernel_overhead_us":
		return &c.GraphKernelOverheadUS, nil
	}
	return nil, fmt.Errorf("no roofline field %q", path)
}

// fitCostSources fits, on srcs, the fields of CostFitCandidates that srcs
// can fix, starting from start. It builds the sensitivity of each row's log
// ratio to each field (moved by one identification step, as Identify does)
// and applies the separability rule, each row being a figure of noise
// NoiseLogError as a run's figure is in Identify. Then it minimises the sum
// over sources of their mean squared log ratio over the separable fields
// with minimizeFields. The other fields keep start's values.
func fitCostSources(srcs []loadedSource, start cost.RooflineConfig) (cost.RooflineConfig, *Identification, float64, error) {
	base := sim.DefaultConfig()
	base.Cost.Roofline = start
	r0, err := costResiduals(srcs, start, false)
	if err != nil {
		return start, nil, 0, err
	}
	id := &Identification{}
	cols := make(map[string][]float64, len(CostFitCandidates))
	steps := make(map[string]float64, len(CostFitCandidates))
	for _, p := range CostFitCandidates {
		v, err := FieldValue(base, p)
		if err != nil {
			return start, nil, 0, err
		}
		id.Fields = append(id.Fields, Separability{Path: p, Value: v, StdErr: math.Inf(1)})
		c, step, err := moved(base, p)
		if err != nil {
			return start, nil, 0, err
		}
		r, err := costResiduals(srcs, c.Cost.Roofline, false)
		if err != nil {
			return start, nil, 0, err
		}
		col := make([]float64, len(r0))
		for i := range r {
			col[i] = r[i] - r0[i]
		}
		cols[p], steps[p] = col, step
	}
	id.separate(cols, nil, CostFitCandidates, func(p string) float64 { return steps[p] })

	cfg := start
	var fields []fitField
	for _, p := range id.Fit() {
		ptr, err := rooflineField(&cfg, p)
		if err != nil {
			return start, nil, 0, err
		}
		prm := TunableParams[p]
		fields = append(fields, fitField{ptr, prm.Lo, prm.Hi})
	}
	lossOf := func() (float64, error) {
		r, err := costResiduals(srcs, cfg, true)
		if err != nil {
			return 0, err
		}
		return dot(r, r), nil
	}
	if len(fields) > 0 {
		if err := minimizeFields(fields, costFitEvals, lossOf); err != nil {
			return start, id, 0, err
		}
	}
	l, err := lossOf()
	if err != nil {
		return start, id, 0, err
	}
	return cfg, id, l, cfg.Validate()
}

// CostLeaveOneOut reads cost check's sources from data and, for each, fits
// the roofline on the others (fitCostSources, from the defaults) and
// prices the source with the defaults and with that fit.
func CostLeaveOneOut(data string) ([]CostHoldOut, error) {
	srcs, err := loadCostSources(data)
	if err != nil {
		return nil, err
	}
	def := cost.DefaultRoofline()
	out := make([]CostHoldOut, 0, len(srcs))
	for i, s := range srcs {
		others := slices.Concat(srcs[:i], srcs[i+1:])
		fitted, id, l, err := fitCostSources(others, def)
		if err != nil {
			return nil, fmt.Errorf("fit without %s: %w", s.Name, err)
		}
		h := CostHoldOut{Source: s.Name, Fitted: fitted, Identification: id, Loss: l}
		for _, o := range others {
			h.FittedOn = append(h.FittedOn, o.Name)
		}
		if h.Defaults, err = s.eval(def); err != nil {
			return nil, err
		}
		if h.HeldOut, err = s.eval(fitted); err != nil {
			return nil, fmt.Errorf("%s with the fit on %s: %w", s.Name, strings.Join(h.FittedOn, ", "), err)
		}
		out = append(out, h)
	}
	return out, nil
}

// deviations are |ratio − 1| of the rows of suite, in row order.
func deviations(rows []CheckRow, suite string) []float64 {
	var d []float64
	for _, r := range rows {
		if r.Suite == suite {
			d = append(d, r.Deviation())
		}
	}
	return d
}

// maxMedian are the largest and the median of v (the mean of the middle
// two when their count is even); v must not be empty.
func maxMedian(v []float64) (float64, float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return s[n-1], med
}

// RunCheckLeaveOneOut writes CostLeaveOneOut's outcome to w: per held-out
// source and suite, the max and median |ratio − 1| with the defaults and
// with the fit on the other sources; the constants each fit found; and
// which fields each fit held at the default, and why.
func RunCheckLeaveOneOut(w io.Writer, data string) error {
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return fmt.Errorf("--data %s: not a folder; point it at the public measurements (profiles/, streams/)", data)
	}
	hs, err := CostLeaveOneOut(data)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Leave-one-out over cost check's sources: each source priced with the defaults (in sample) and with")
	fmt.Fprintln(w, "roofline constants fitted on the other sources only (held out).")
	fmt.Fprintln(w)
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header("held-out source", "suite", "rows", "defaults: max |ratio-1|", "defaults: median", "held out: max |ratio-1|", "held out: median")
	for _, h := range hs {
		for _, suite := range suitesOf(h.Source) {
			d, o := deviations(h.Defaults, suite), deviations(h.HeldOut, suite)
			if len(d) == 0 || len(d) != len(o) {
				return fmt.Errorf("%s: suite %s priced %d rows with the defaults and %d with the fit", h.Source, suite, len(d), len(o))
			}
			dMax, dMed := maxMedian(d)
			oMax, oMed := maxMedian(o)
			_ = t.Append(h.Source, suite, strconv.Itoa(len(d)), fmt.Sprintf("%.3f", dMax), fmt.Sprintf("%.3f", dMed),
				fmt.Sprintf("%.3f", oMax), fmt.Sprintf("%.3f", oMed))
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Constants of each fit (\"held\": kept at its default, see below):")
	c := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	header := []any{"fit", "fitted on", "loss"}
	for _, p := range CostFitCandidates {
		header = append(header, strings.TrimPrefix(p, "cost.roofline."))
	}
	c.Header(header...)
	def := cost.DefaultRoofline()
	row := []any{"defaults", "", ""}
	for _, p := range CostFitCandidates {
		v, _ := rooflineField(&def, p)
		row = append(row, num(*v))
	}
	_ = c.Append(row...)
	for _, h := range hs {
		row := []any{"without " + h.Source, strings.Join(h.FittedOn, ", "), fmt.Sprintf("%.4f", h.Loss)}
		fitted := h.Fitted
		for _, p := range CostFitCandidates {
			v, _ := rooflineField(&fitted, p)
			cell := num(*v)
			if !slices.Contains(h.Identification.Fit(), p) {
				cell += " held"
			}
			row = append(row, cell)
		}
		_ = c.Append(row...)
	}
	if err := c.Render(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Held at the default (the sources fitted on cannot fix it to within ±25 %, see Identify):")
	for _, h := range hs {
		for _, s := range h.Identification.Fields {
			if !s.Separable {
				fmt.Fprintf(w, "  without %s: %s\n", h.Source, s.Why())
			}
		}
	}
	fmt.Fprintln(w, "  in every fit: all_reduce_efficiency and the MoE routing fields (not fitted)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Held at a default read off the held-out source itself (those folds are in sample for it):")
	none := true
	for _, h := range hs {
		for _, s := range h.Identification.Fields {
			if !s.Separable && slices.Contains(CostDefaultsReadOff[s.Path], h.Source) {
				fmt.Fprintf(w, "  without %s: %s = %s\n", h.Source, strings.TrimPrefix(s.Path, "cost.roofline."), num(s.Value))
				none = false
			}
		}
	}
	if none {
		fmt.Fprintln(w, "  none")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Sources:")
	for _, s := range CostSources {
		fmt.Fprintf(w, "  %s (%s): %s\n", s.Name, strings.Join(s.Suites, ", "), s.About)
	}
	fmt.Fprintln(w, "The serving suite is a whole simulated run: it is evaluated held out but not fitted on (a fit would")
	fmt.Fprintln(w, "simulate it thousands of times); fits on vllm-0.8.3 use the same run's median ITL through its vllm row.")
	fmt.Fprintln(w, "Sarathi's two step-shape rows price the same hybrid step against the same measurement; fits count it once.")
	return nil
}

// suitesOf are the suites of the named source.
func suitesOf(name string) []string {
	for _, s := range CostSources {
		if s.Name == name {
			return s.Suites
		}
	}
	return nil
}
