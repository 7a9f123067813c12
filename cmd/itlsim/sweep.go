package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

type sweepOptions struct {
	temps    *tempFiles
	st       studyFlags
	rate     string
	kneeDrop float64
}

func newSweepCmd(temps *tempFiles) *cobra.Command {
	cmd, _ := sweepCommand(temps)
	return cmd
}

// sweepCommand is the sweep command and the options its flags fill in
// (merge parses a manifest's arguments with it).
func sweepCommand(temps *tempFiles) (*cobra.Command, *sweepOptions) {
	o := &sweepOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "sweep [SCENARIO.yaml] --rate A:B:STEP | --rate r1,r2,...",
		Short: "Run a scenario over a grid of arrival rates (and compared settings) and find where it saturates",
		Long: `Simulate the scenario at every rate of --rate, for every compared setting
(--vary, comma lists) and every seed (--seeds K), and report per point the
offered and achieved load, system tokens/s, tokens/s per user, latency
percentiles, the p99 of per-stream p99 ITL, goodput and whether the run was
stable; per configuration, the saturation point (fitted: the rate where
achieved throughput stops tracking offered load, with its interval) and the
knee (where tokens/s per user fell --knee-drop below light load or TTFT p99
doubled, interpolated between rates), in words.

The warm-up is detected by MSER-5 on the backlog (or --warm-up SHARE) and
the drain (--drain) left out; a point's stability is an OLS trend test on
its backlog, a point not yet conclusive is rerun with twice the requests up
to --max-extend times, and a point too short to judge is never called
stable.

Points run on -j workers (default every core); the output is the same for
any -j. --out DIR with --shard-count N computes one shard's points (on
Kubernetes, an Indexed Job: --emit-k8s-job prints one); itlsim merge DIR
then writes what one machine would have.

  itlsim sweep --rate 4:24:4
  itlsim sweep --rate 8,12,16 --vary scheduler.max_num_batched_tokens=512,2048 --json sweep.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	o.st.bind(cmd, temps, 1)
	f := cmd.Flags()
	f.StringVar(&o.rate, "rate", "", "arrival rates, req/s: A:B:STEP (A, A+STEP, ... B) or r1,r2,...")
	f.Float64Var(&o.kneeDrop, "knee-drop", 0.2, "the knee is where tokens/s per user has fallen this share below the lowest rate's")
	return cmd, o
}

// plan builds the sweep from the flags.
func (o *sweepOptions) plan(cmd *cobra.Command, args []string) (*study.SweepPlan, []string, []string, error) {
	if err := o.st.checkCommon(cmd); err != nil {
		return nil, nil, nil, err
	}
	if !cmd.Flags().Changed("rate") {
		return nil, nil, nil, errors.New("--rate: expected the rates to sweep (A:B:STEP, or a list r1,r2)")
	}
	rates, err := study.ParseRates(o.rate)
	if err != nil {
		return nil, nil, nil, err
	}
	vs, err := o.st.variants(cmd, args)
	if err != nil {
		return nil, nil, nil, err
	}
	p := &study.SweepPlan{Configs: vs, Rates: rates, Seeds: study.SeedList(vs[0].Config.Seed, o.st.seeds), Window: o.st.window(), KneeDrop: o.kneeDrop}
	terms, texts := o.st.terms()
	if len(terms) > 0 {
		p.Terms = terms
	}
	if err := p.Validate(); err != nil {
		return nil, nil, nil, err
	}
	specs := p.Points()
	keys := make([]string, len(specs))
	labels := make([]string, len(specs))
	for i, s := range specs {
		k, err := study.Key("sweep", struct {
			Window study.Window `json:"window"`
			Sim    any          `json:"config"`
			SLO    []string     `json:"slo"`
		}{p.Window, s.Simulated, texts})
		if err != nil {
			return nil, nil, nil, err
		}
		keys[i] = k
		labels[i] = fmt.Sprintf("%s at %s req/s, seed %d", vs[s.Config].Name, strconv.FormatFloat(s.Rate, 'g', -1, 64), s.Seed)
	}
	return p, keys, labels, nil
}

func (o *sweepOptions) run(cmd *cobra.Command, args []string) error {
	setStudyGCPercent()
	p, keys, _, err := o.plan(cmd, args)
	if err != nil {
		return err
	}
	specs := p.Points()
	return runStudy(cmd, args, &o.st, o.temps, "sweep", keys,
		func(i int) (study.Point, error) {
			pts, err := study.RunPoints(p, specs[i:i+1], 1, nil)
			if err != nil {
				return study.Point{}, err
			}
			return pts[0], nil
		},
		func(workers int, line *progress.Line) ([]study.Point, error) {
			return study.RunPoints(p, specs, workers, progress.Counter(line, "points"))
		},
		func(pts []study.Point) error { return o.render(cmd.OutOrStdout(), p, pts, o.st.out) })
}

// render writes a sweep's results; a one-machine run and a merge both
// come here with points read back from their JSON.
func (o *sweepOptions) render(stdout io.Writer, p *study.SweepPlan, pts []study.Point, out outputFlags) error {
	pts, err := study.Normalize(pts)
	if err != nil {
		return err
	}
	res := study.AnalyzeSweep(p, pts)
	return writeStudy(o.temps, stdout, out, res,
		func(w io.Writer, f reports.Format) error { return study.WriteSweepTable(w, &res, f) },
		func(w io.Writer) error { return study.WriteSweepCSV(w, &res) },
		func(w io.Writer, h *htmlOutput) error {
			opt := h.opts
			opt.Study = &reporthtml.StudyScenario{Config: p.Configs[0].Config, Variants: variantConfigs(p.Configs), Rates: p.Rates,
				Terms: termTexts(p.Terms), Seeds: len(p.Seeds), MaxExtend: p.Window.MaxExtend}
			return reporthtml.WriteSweep(w, &res, opt)
		})
}

// variantConfigs are the configurations of a study's variants, in order.
func variantConfigs(vs []scenario.Variant) []sim.Config {
	out := make([]sim.Config, len(vs))
	for i, v := range vs {
		out[i] = v.Config
	}
	return out
}

// termTexts are a study's SLO terms as the user wrote them.
func termTexts(c study.Condition) []string {
	ts, _ := c.(study.Terms)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Text
	}
	return out
}
