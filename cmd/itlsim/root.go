package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
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

// flagError rewrites the flag library's message for a mistyped value
// ("invalid argument "-1" for "--seed" flag: strconv.ParseUint: parsing
// "-1": invalid syntax") as what the flag expects; other errors pass as
// they are.
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	var want string
	switch iv.GetFlag().Value.Type() {
	case "uint", "uint8", "uint16", "uint32", "uint64":
		want = "a whole number ≥ 0"
	case "int", "int8", "int16", "int32", "int64":
		want = "a whole number"
	case "float32", "float64":
		want = "a number"
	case "bool":
		want = "true or false"
	case "duration":
		want = "a duration such as 500ms or 2s"
	default:
		return err
	}
	return fmt.Errorf("--%s: expected %s, got %s", iv.GetFlag().Name, want, iv.GetValue())
}
