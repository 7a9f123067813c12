package main

import (
	"errors"
	"fmt"
	"github.com/itlsim/itlsim/reports/outfiles"
	"io"
	"os"
	"os/signal"
	"syscall"

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
//
// The temporary files the command creates are registered in temps: Main
// removes what is left of them when the command returns, and on SIGINT or
// SIGTERM removes them and exits at once with 130 or 143.
func Main(args []string, stdout, stderr io.Writer) int {
	setGCPercent()
	temps := newTempFiles()
	defer temps.RemoveAll()
	stop := removeTempsOnSignal(temps, stderr)
	defer stop()
	out := outfiles.NewCheckedWriter(stdout)
	root := newRootCmd(out, stderr, temps)
	prof := cpuProfile{temps: temps}
	prof.bind(root)
	root.SetArgs(vllmGoodputArgs(args))
	cmd, err := root.ExecuteC()
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if werr := out.Failed(); werr != nil {
		// What the command printed did not all arrive (a full disk, a
		// closed pipe): the answer is lost, so the command failed, also
		// when it had its own error to report (a failed or inconclusive
		// gate, whose verdict table is what was lost): that error follows.
		lost := fmt.Errorf("stdout: %w", outfiles.PathErr(werr))
		if err != nil && !errors.Is(err, werr) {
			lost = fmt.Errorf("%w; %v", lost, err)
		}
		var ee *exitError
		switch {
		case cmd != nil && cmd.Name() == "gate":
			err = &exitError{gateBadInput, lost}
		case errors.As(err, &ee):
			err = &exitError{ee.code, lost}
		default:
			err = lost
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "itlsim: %v\n", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// removeTempsOnSignal exits on SIGINT or SIGTERM, as the default action
// would, but first removes the temporary files in temps. Call stop when the
// command is done.
func removeTempsOnSignal(temps *tempFiles, stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if stop := temps.TakeGraceful(); stop != nil {
					// A command that can stop cleanly (record, serve) finishes
					// its output; a second signal exits at once.
					fmt.Fprintf(stderr, "itlsim: stopping (%v; again to quit at once)\n", s)
					stop()
					continue
				}
				os.Exit(interrupted(s, temps, stderr))
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// interrupted removes the temporary files after signal s and returns the
// exit status of a process killed by s: 130 for SIGINT, 143 for SIGTERM.
func interrupted(s os.Signal, temps *tempFiles, stderr io.Writer) int {
	temps.RemoveAll()
	fmt.Fprintf(stderr, "itlsim: stopped (%v)\n", s)
	if s == os.Interrupt {
		return 128 + 2
	}
	return 128 + 15
}

func newRootCmd(stdout, stderr io.Writer, temps *tempFiles) *cobra.Command {
	root := &cobra.Command{
		Use:   "itlsim",
		Short: "Simulate per-stream inter-token latency of an LLM inference server",
		Long: `itlsim simulates an LLM inference replica (continuous batching, chunked prefill,
paged KV cache with swap and recompute) and reports what users watching the
streams feel: per-stream ITL percentiles, jitter, ITL goodput and the causes
of every stall.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	// One command per line; each lives in its own file.
	// Commands that write files get the invocation's temps.
	root.AddCommand(newRunCmd(temps))
	root.AddCommand(newPresetsCmd())
	root.AddCommand(newCostCmd())
	root.AddCommand(newWorkloadCmd(temps))
	root.AddCommand(newReportCmd(temps))
	root.AddCommand(newAnalyzeCmd(temps))
	root.AddCommand(newGateCmd(temps))
	root.AddCommand(newReplayCmd(temps))
	root.AddCommand(newSweepCmd(temps))
	root.AddCommand(newCapacityCmd(temps))
	root.AddCommand(newMergeCmd(temps))
	root.AddCommand(newVersionCmd())
	root.AddCommand(newValidateCmd(temps))
	root.AddCommand(newCalibrateCmd(temps))
	root.AddCommand(newServeCmd(stdout, stderr, temps))
	root.AddCommand(newRecordCmd(temps))
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
	case "ms":
		want = "milliseconds (250) or a duration with a unit (250ms, 2s)"
	default:
		return err
	}
	return fmt.Errorf("--%s: expected %s, got %s", iv.GetFlag().Name, want, iv.GetValue())
}
