package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/calibrate"
)

func newCostCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Inspect the step cost model",
	}
	var data string
	var all, loo bool
	check := &cobra.Command{
		Use:   "check",
		Short: "Print the default roofline's predictions against published measurements",
		Long: `Compare the default roofline step model with the public measurements in a data
folder (kernel latencies on H100, per-layer operator times on A100, Sarathi-Serve's
step-shape table, and a vLLM 0.8.3 serving run of Llama-3.3-70B on 8x A100-40GB,
which is simulated end to end). Asserted rows are the ones the test suite holds;
the others (small, launch-bound shapes) are printed for information.

With --leave-one-out, each of the four sources (the H100 kernels, Vidur's A100
layers, Sarathi-Serve's table, the vLLM run) is priced with roofline constants
fitted on the other three only, beside its error with the defaults.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if loo {
				if all {
					return errors.New("--all: not used with --leave-one-out, which prints errors per source and suite, not rows")
				}
				return calibrate.RunCheckLeaveOneOut(cmd.OutOrStdout(), data)
			}
			return calibrate.RunCheck(cmd.OutOrStdout(), data, all)
		},
	}
	check.Flags().StringVar(&data, "data", "../shared/data", "folder holding profiles/ and streams/ (see the README's data section)")
	check.Flags().BoolVar(&all, "all", false, "print every row, not only the per-suite summary and the asserted rows' worst cases")
	check.Flags().BoolVar(&loo, "leave-one-out", false, "fit the roofline's constants on all sources but one and price the one left out, for each source")
	cmd.AddCommand(check, newCostStepCmd())
	return cmd
}
