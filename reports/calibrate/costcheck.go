package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// RunCheck writes the check of the default roofline against the public
// measurements in the data folder to w: the compared rows (every row with
// all, else the asserted ones of the sarathi, vllm and serving suites) and
// a summary per suite. It is an error when an asserted row fails.
func RunCheck(w io.Writer, data string, all bool) error {
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return fmt.Errorf("--data %s: not a folder; point it at the public measurements (profiles/, streams/)", data)
	}
	rows, err := CheckAll(data, cost.DefaultRoofline())
	if err != nil {
		return err
	}
	serving, err := CheckServing(data)
	if err != nil {
		return err
	}
	rows = append(rows, serving)
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header("suite", "shape", "predicted ms", "measured ms", "ratio", "asserted", "result")
	for _, r := range rows {
		if !all && !(r.Asserted && (r.Suite == "sarathi" || r.Suite == "vllm" || r.Suite == "serving")) {
			continue
		}
		_ = t.Append(rowCells(r)...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	s := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	s.Header("suite", "rows", "asserted", "failed", "max |ratio-1| asserted", "worst asserted shape", "max |ratio-1| all")
	failed := 0
	for _, x := range Summarize(rows) {
		failed += x.Failed
		_ = s.Append(x.Suite, strconv.Itoa(x.Rows), strconv.Itoa(x.Asserted), strconv.Itoa(x.Failed),
			fmt.Sprintf("%.3f", x.MaxDeviation), x.WorstShape, fmt.Sprintf("%.3f", x.MaxDeviationAll))
	}
	if err := s.Render(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d asserted comparison(s) out of tolerance", failed)
	}
	return nil
}

func rowCells(r CheckRow) []any {
	asserted, result := "no", ""
	if r.Asserted {
		asserted, result = "yes", "pass"
		if !r.Pass {
			result = "FAIL"
		}
		result += " (" + r.Criterion + ")"
	}
	return []any{r.Suite, r.Shape, fmt.Sprintf("%.3f", r.PredictedMS), fmt.Sprintf("%.3f", r.MeasuredMS),
		fmt.Sprintf("%.3f", r.Ratio), asserted, result}
}

// servingFile is the vLLM benchmark the serving check reproduces.
const servingFile = "streams/vllm_bench_llama33_70b_tp8_a100/serving_tp8_pp1_sharegpt_qps_01.json"

// ServingTolerance bounds |simulated/measured − 1| for the serving check.
const ServingTolerance = 0.30

// costcheckSeed roots the random streams of the serving check: fixed, so
// the check's table is the same on every run.
const costcheckSeed = 1

// CheckServing simulates the vLLM 0.8.3 run in servingFile (Llama-3.3-70B,
// TP8 on A100-40GB, the same 200 ShareGPT prompt and output lengths,
// Poisson arrivals at its request rate) with the default roofline and
// compares the simulated median ITL with the one vLLM measured.
func CheckServing(data string) (CheckRow, error) {
	return checkServing(data, cost.DefaultRoofline())
}

// checkServing is CheckServing with the roofline configured by rcfg.
func checkServing(data string, rcfg cost.RooflineConfig) (CheckRow, error) {
	path := filepath.Join(data, servingFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return CheckRow{}, err
	}
	var f struct {
		InputLens   []int   `json:"input_lens"`
		OutputLens  []int   `json:"output_lens"`
		RequestRate float64 `json:"request_rate"`
		MedianITLMS float64 `json:"median_itl_ms"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return CheckRow{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.InputLens) == 0 || len(f.InputLens) != len(f.OutputLens) || !(f.RequestRate > 0) || !(f.MedianITLMS > 0) {
		return CheckRow{}, errors.New(path + ": expected input_lens and output_lens of equal length, request_rate and median_itl_ms")
	}
	cfg := sim.DefaultConfig()
	cfg.Model, cfg.GPU, cfg.TP = "llama-3.3-70b", "a100-40gb", 8
	cfg.Cost.Roofline = rcfg
	setup, err := cfg.Resolve()
	if err != nil {
		return CheckRow{}, err
	}
	// Poisson arrivals at the benchmark's rate, from the stream "arrivals"
	// under a fixed seed, with its lengths in order.
	rng := seed.Stream(costcheckSeed, "arrivals")
	reqs := make([]workloads.Request, len(f.InputLens))
	var t float64
	for i := range reqs {
		reqs[i] = workloads.Request{ID: i, Arrival: int64(t), InputTokens: f.InputLens[i], OutputTokens: max(1, f.OutputLens[i]),
			Seed: workloads.RequestSeed(costcheckSeed, i)}
		t += rng.ExpFloat64() / f.RequestRate * 1e9
	}
	e, err := sim.NewFromSetup(setup, &workloads.Slice{Requests: reqs})
	if err != nil {
		return CheckRow{}, err
	}
	res, err := study.RunScored(e, false, nil)
	if err != nil {
		return CheckRow{}, err
	}
	sum := reports.Summarize(res, setup.Config.Metrics)
	r := CheckRow{
		Suite:       "serving",
		Shape:       fmt.Sprintf("llama-3.3-70b tp8 a100-40gb, %d ShareGPT requests at %g req/s: median ITL", len(reqs), f.RequestRate),
		PredictedMS: sum.ITLPooled.P50,
		MeasuredMS:  f.MedianITLMS,
		Asserted:    true,
		Tolerance:   ServingTolerance,
	}
	r.Ratio = r.PredictedMS / r.MeasuredMS
	r.Pass = r.Deviation() <= ServingTolerance
	r.Criterion = fmt.Sprintf("|ratio-1| = %.3f <= %.2f", r.Deviation(), ServingTolerance)
	return r, nil
}
