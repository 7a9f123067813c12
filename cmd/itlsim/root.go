package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// exitError carries a specific exit status (gate uses 1 for a failed gate
// and 2 for bad input); other errors exit 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs the command line and returns the process exit status. Tests
// call it in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "itlsim: %v\n", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "itlsim",
		Short: "Simulate per-stream inter-token latency of an LLM inference server",
		Long: `itlsim simulates an LLM inference replica (continuous batching, chunked prefill,
paged KV cache with swap and recompute) and reports what users watching the
streams feel: per-stream ITL percentiles, jitter, ITL goodput and the causes
of every stall.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// One command per line; each lives in its own file.
	root.AddCommand(newRunCmd())
	root.AddCommand(newPresetsCmd())
	root.AddCommand(newCostCmd())
	root.AddCommand(newWorkloadCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newAnalyzeCmd())
	root.AddCommand(newGateCmd())
	root.AddCommand(newReplayCmd())
	return root
}
