package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// scenarioFlags are the flags that build the scenario a command
// simulates: the shorthands, --set, --vary and --skip-bad-rows. run,
// sweep, capacity and merge share them.
type scenarioFlags struct {
	values      map[string]*string // shorthand flag → value
	sets        []string
	vary        []string
	skipBadRows bool
	// slo, when set, applies --goodput to the scenario and reads the SLO
	// terms of the file's slo: and of --slo into terms.
	slo   *sloFlags
	terms []slo.Term
}

// addScenarioFlags registers the scenario flags on f, except the
// shorthands named in skip (sweep and capacity set workload.rate
// themselves).
func addScenarioFlags(f *pflag.FlagSet, skip ...string) *scenarioFlags {
	o := &scenarioFlags{values: map[string]*string{}}
	defaults := sim.DefaultConfig()
	for _, s := range shorthands {
		if contains(skip, s.flag) {
			continue
		}
		usage := s.usage
		if s.list {
			usage += " (comma list compares)"
		}
		// The flag holds text (a list compares, a duration takes a unit);
		// its type and default in --help are the field's.
		o.values[s.flag] = new(string)
		bindField(f, o.values[s.flag], s.flag, s.path, usage, defaults)
	}
	f.StringArrayVar(&o.sets, "set", nil, "set any field: path=value (repeatable), e.g. --set cost.roofline.overhead_us=3000")
	f.StringArrayVar(&o.vary, "vary", nil, "compare any field: path=v1,v2 (repeatable; separate values by ';' when they contain commas)")
	f.BoolVar(&o.skipBadRows, "skip-bad-rows", false, "pass over malformed trace rows instead of stopping at the first (the count is reported)")
	return o
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// variants builds the configurations the flags and the scenario file (the
// optional first argument) describe: the base scenario with every flag
// applied, expanded over every comparison.
func (o *scenarioFlags) variants(cmd *cobra.Command, args []string) ([]scenario.Variant, error) {
	base := sim.DefaultConfig()
	var cmps []scenario.Comparison
	var fileTerms []string
	var fileLines []int
	file := ""
	if len(args) == 1 {
		f, err := scenario.Load(args[0])
		if err != nil {
			return nil, err
		}
		base = f.Config
		file, fileTerms, fileLines = args[0], f.SLO, f.SLOLines
		for _, c := range f.Compare {
			cmp, err := scenario.ParseComparison(c)
			if err != nil {
				return nil, fmt.Errorf("%s: compare: %w", args[0], err)
			}
			cmp.Origin = args[0] + ": compare: " + c
			cmps = append(cmps, cmp)
		}
	}
	// setBy records which flag set each field on the command line, so that
	// a field set twice (--seed 5 --set seed=6) is an error rather than one
	// value silently replacing the other. A comparison of a set field
	// replaces the value in every run, and its labels say so.
	setBy := map[string]string{}
	for _, s := range shorthands {
		val, ok := o.values[s.flag]
		if !ok || !cmd.Flags().Changed(s.flag) {
			continue
		}
		v := *val
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("--%s: %s: expected a value, got %q%s", s.flag, s.path, v, offHint(s.path))
		}
		switch {
		case strings.HasSuffix(s.path, "_ms"):
			v = durationsIn(v, time.Millisecond)
		case strings.HasSuffix(s.path, "_s"):
			v = durationsIn(v, time.Second)
		}
		if s.list && strings.Contains(v, ",") {
			cmp, err := scenario.ParseComparison(s.path + "=" + v)
			if err != nil {
				return nil, fmt.Errorf("--%s: %w", s.flag, err)
			}
			cmp.Origin = "--" + s.flag + " " + *val
			cmps = append(cmps, cmp)
			continue
		}
		if err := scenario.Set(&base, s.path, v); err != nil {
			return nil, fmt.Errorf("--%s: %w", s.flag, err)
		}
		setBy[s.path] = "--" + s.flag + " " + *val
	}
	if o.skipBadRows {
		base.Workload.SkipBadRows = true
	}
	for _, s := range o.sets {
		path, val, ok := strings.Cut(s, "=")
		if !ok {
			continue // ApplySets names the malformed entry
		}
		if strings.TrimSpace(val) == "" {
			return nil, fmt.Errorf("--set %s: %s: expected a value, got %q%s", s, path, val, offHint(path))
		}
		if by, ok := setBy[path]; ok {
			return nil, fmt.Errorf("--set %s: %s is already set (by %s)", s, path, by)
		}
		setBy[path] = "--set " + s
	}
	if err := scenario.ApplySets(&base, o.sets); err != nil {
		return nil, err
	}
	if o.slo != nil {
		if err := o.slo.applyGoodput(cmd, &base.Metrics); err != nil {
			return nil, err
		}
		terms, err := o.slo.parse(file, fileTerms, fileLines)
		if err != nil {
			return nil, err
		}
		o.terms = terms
	}
	for _, s := range o.vary {
		cmp, err := scenario.ParseComparison(s)
		if err != nil {
			return nil, fmt.Errorf("--vary: %w", err)
		}
		cmp.Origin = "--vary " + s
		cmps = append(cmps, cmp)
	}
	setsField := func(path string) bool {
		if _, ok := setBy[path]; ok {
			return true
		}
		for _, c := range cmps {
			if c.Path == path {
				return true
			}
		}
		return false
	}
	if setsField("workload.duration_s") && !setsField("workload.requests") {
		// A duration given on the command line means the run to last that
		// long, not to stop at the default (or the file's) request count.
		base.Workload.Requests = 0
	}
	return scenario.Expand(base, cmps)
}
