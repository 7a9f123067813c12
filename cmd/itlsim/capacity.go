package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
	reporthtml "github.com/itlsim/itlsim/reports/html"
	"github.com/itlsim/itlsim/reports/progress"
	"github.com/itlsim/itlsim/reports/study"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

type capacityOptions struct {
	temps       *tempFiles
	st          studyFlags
	tolerance   float64
	precision   float64
	maxSeeds    int
	startRate   float64
	targetRate  float64
	targetField string
	targetMax   int
	prices      []string
	sensitivity bool
}

func newCapacityCmd(temps *tempFiles) *cobra.Command {
	cmd, _ := capacityCommand(temps)
	return cmd
}

// capacityCommand is the capacity command and the options its flags fill
// in (merge parses a manifest's arguments with it).
func capacityCommand(temps *tempFiles) (*cobra.Command, *capacityOptions) {
	o := &capacityOptions{temps: temps}
	cmd := &cobra.Command{
		Use:   "capacity [SCENARIO.yaml] --slo TERM...",
		Short: "Find the highest arrival rate at which every SLO term holds, per configuration, with its cost",
		Long: `For each configuration (--vary, comma lists), find the highest arrival rate at
which every --slo term holds and the run is stable: an exponential bracket
from the scenario's rate (doubling while it holds, halving while it fails),
then bisection until the bracket is within --tolerance of the rate. Each of
--seeds K seeds (default 3) is searched on its own; the answer is the mean
of the seeds' rates with a Student's t 95 % interval over seeds (ci_low,
ci_high); --seeds auto starts at 3 and adds seeds until the interval is
within --precision of the rate on either side (at most --max-seeds).

A probe holds when its backlog is steady and every SLO term's 95 %
confidence bound (batch means over 10 sections of the window) meets its
limit. The warm-up is detected by MSER-5 on the backlog (or --warm-up
SHARE), the drain (--drain) left out; stability is an OLS trend test on
the backlog. A probe not yet conclusive is rerun with twice the requests,
up to --max-extend times the scenario's; one still inconclusive fails and
says so. docs/how-sure.md gives the rules.

Each configuration reports its GPUs, tokens/s per GPU and USD per million
output tokens at its capacity (prices per GPU-hour from the GPU presets, or
--gpu-price NAME=USD), and whether it is on the Pareto front of tokens/s per
GPU against tokens/s per user (pareto) and against the p99 of per-stream p99
ITL (pareto_itl).

--sensitivity searches each configuration again with the same seeds and every
step 2 % faster and 2 % slower (bisection to 0.5 %), and reports max_rate's
elasticity to step time in % per % (sensitivity_pct_per_pct); beyond ±5 the
answer is called fragile in words. It costs about three more searches, so it
is off by default.

--target-rate R turns the question around: the smallest value of
--target-field (default cluster.replicas) that holds every term at R req/s on
every seed, and over a grid the cheapest configuration that does.

  itlsim capacity --slo stream-p99-itl:p99<=200ms --slo ttft:p99<=1s
  itlsim capacity --gpu h100-sxm-80gb,h200-141gb --slo stream-p99-itl:p99<=150ms --json cap.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	o.st.bind(cmd, temps, 3)
	f := cmd.Flags()
	f.Float64Var(&o.tolerance, "tolerance", 0.02, "stop bisecting when the bracket is within this share of the rate")
	f.Float64Var(&o.precision, "precision", 0.05, "with --seeds auto: add seeds until the 95 % interval of max_rate is within this share of it on either side")
	f.IntVar(&o.maxSeeds, "max-seeds", 20, "with --seeds auto: the most seeds searched")
	f.Float64Var(&o.startRate, "start-rate", 0, "first rate probed, req/s (0: the scenario's workload.rate)")
	f.Float64Var(&o.targetRate, "target-rate", 0, "find the smallest --target-field (and over a grid the cheapest configuration) holding every term at this rate, req/s")
	f.StringVar(&o.targetField, "target-field", "cluster.replicas", "with --target-rate: the integer field searched")
	f.IntVar(&o.targetMax, "target-max", 1024, "with --target-rate: the largest value of --target-field tried")
	f.BoolVar(&o.sensitivity, "sensitivity", false, "search again with step times ±2 % and report max_rate's elasticity to step time (% per %); about 3× the searches")
	f.StringArrayVar(&o.prices, "gpu-price", nil, "on-demand price per GPU-hour, NAME=USD (repeatable), replacing the preset's")
	return cmd, o
}

// capacityPlan is everything a capacity study computes from.
type capacityPlan struct {
	variants []scenario.Variant
	search   *study.Search
	target   *study.Target
	prices   study.Prices
	keys     []string
	labels   []string
}

func (o *capacityOptions) plan(cmd *cobra.Command, args []string) (*capacityPlan, error) {
	if err := o.st.checkCommon(cmd); err != nil {
		return nil, err
	}
	prices, err := study.ParsePrices(o.prices)
	if err != nil {
		return nil, err
	}
	vs, err := o.st.variants(cmd, args)
	if err != nil {
		return nil, err
	}
	cfgs := make([]sim.Config, len(vs))
	for i, v := range vs {
		cfgs[i] = v.Config
	}
	if err := prices.CheckKnown(cfgs); err != nil {
		return nil, err
	}
	terms, texts := o.st.terms()
	for _, v := range vs {
		if err := study.CheckRated(v.Config); err != nil {
			return nil, err
		}
	}
	p := &capacityPlan{variants: vs, prices: prices}
	p.search = &study.Search{Window: o.st.window(), Tolerance: o.tolerance, StartRate: o.startRate,
		Seeds: study.SeedList(vs[0].Config.Seed, o.st.seeds)}
	if o.st.autoSeeds {
		p.search.AutoSeeds, p.search.Precision, p.search.MaxSeeds = true, o.precision, o.maxSeeds
	}
	if len(terms) > 0 {
		p.search.Terms = terms
	}
	p.search.Sensitivity = o.sensitivity
	if err := p.search.Validate(); err != nil {
		return nil, err
	}
	if !cmd.Flags().Changed("target-rate") {
		for _, f := range []string{"target-field", "target-max"} {
			if cmd.Flags().Changed(f) {
				return nil, fmt.Errorf("--%s applies with --target-rate R: give the rate the searched field must hold", f)
			}
		}
	}
	if cmd.Flags().Changed("target-rate") {
		if o.st.autoSeeds {
			return nil, errors.New("--seeds auto: with --target-rate give a seed count (every seed must hold the target)")
		}
		if o.sensitivity {
			return nil, errors.New("--sensitivity: applies to a capacity search (max_rate), not to --target-rate")
		}
		t := study.Target{Rate: o.targetRate, Field: o.targetField, Max: o.targetMax}
		if err := t.Check(vs[0].Config); err != nil {
			return nil, err
		}
		p.target = &t
	}
	if p.keys, p.labels, err = study.CapacityKeys(vs, p.search, texts, p.target); err != nil {
		return nil, err
	}
	return p, nil
}

func (o *capacityOptions) run(cmd *cobra.Command, args []string) error {
	setStudyGCPercent()
	p, err := o.plan(cmd, args)
	if err != nil {
		return err
	}
	return runStudy(cmd, args, &o.st, o.temps, "capacity", p.keys,
		func(i int) (study.ConfigSearch, error) {
			cs, err := p.compute([]scenario.Variant{p.variants[i]}, 1, nil)
			if err != nil {
				return study.ConfigSearch{}, err
			}
			return cs[0], nil
		},
		func(workers int, line *progress.Line) ([]study.ConfigSearch, error) {
			unit := "searches" // one per configuration and seed
			if p.target != nil {
				unit = "configurations"
			}
			return p.compute(p.variants, workers, p.search.Watch(line, unit))
		},
		func(cs []study.ConfigSearch) error { return o.render(cmd.OutOrStdout(), p, cs, o.st.out) })
}

// compute searches vs: for capacity, or for the target.
func (p *capacityPlan) compute(vs []scenario.Variant, workers int, progress study.Progress) ([]study.ConfigSearch, error) {
	if p.target != nil {
		return p.search.SearchTargets(vs, *p.target, p.prices, workers, progress)
	}
	return p.search.SearchConfigs(vs, p.prices, workers, progress)
}

// render writes a capacity study's results from the per-configuration
// searches, read back from their JSON.
func (o *capacityOptions) render(stdout io.Writer, p *capacityPlan, cs []study.ConfigSearch, out outputFlags) error {
	cs, err := study.Normalize(cs)
	if err != nil {
		return err
	}
	res := study.AssembleCapacity(cs, len(p.search.Seeds), p.target)
	return writeStudy(o.temps, stdout, out, res,
		func(w io.Writer, f reports.Format) error { return study.WriteCapacityTable(w, &res, f) },
		func(w io.Writer) error { return study.WriteCapacityCSV(w, &res) },
		func(w io.Writer, h *htmlOutput) error {
			opt := h.opts
			opt.Study = &reporthtml.StudyScenario{Config: p.variants[0].Config, Variants: variantConfigs(p.variants), Terms: termTexts(p.search.Terms),
				Seeds: len(p.search.Seeds), MaxExtend: p.search.Window.MaxExtend}
			return reporthtml.WriteCapacity(w, &res, opt)
		})
}
