package main

import (
	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/slo"
	"github.com/itlsim/itlsim/sim/scenario"
)

// scenarioFlags are the flags sweep and capacity take to build their
// scenario, exactly run's: the field flags, --set, --vary, --skip-bad-rows,
// --slo and --goodput. The configurations are built by run's own code
// (runOptions.variants).
type scenarioFlags struct {
	run *runOptions
	// terms are the SLO terms of the file's slo: and of --slo, read by
	// variants.
	terms []slo.Term
}

// addScenarioFlags registers the scenario flags on cmd, except the field
// flags named in skip (sweep and capacity set workload.rate themselves).
func addScenarioFlags(cmd *cobra.Command, temps *tempFiles, skip ...string) *scenarioFlags {
	o := &scenarioFlags{run: &runOptions{temps: temps, values: map[string]*string{}}}
	o.run.bindFields(cmd, true, skip...)
	cmd.Flags().StringArrayVar(&o.run.vary, "vary", nil, "compare any field: path=v1,v2 (repeatable; separate values by ';' when they contain commas)")
	o.run.slo.bind(cmd)
	return o
}

// variants builds the configurations as run does and reads the SLO terms.
func (o *scenarioFlags) variants(cmd *cobra.Command, args []string) ([]scenario.Variant, error) {
	vs, sc, err := o.run.variants(cmd, args)
	if err != nil {
		return nil, err
	}
	terms, err := o.run.slo.parse(sc.file, sc.terms, sc.lines)
	if err != nil {
		return nil, err
	}
	o.terms = terms
	return vs, nil
}
