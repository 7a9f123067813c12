package main

import (
	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/progress"
)

// bindQuiet adds --quiet, which turns off the progress line.
func bindQuiet(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "quiet", false, "no progress line on stderr (drawn only when stderr is a terminal)")
}

// progressLine is the command's progress line on stderr, or nil when
// stderr is not a terminal or with --quiet.
func progressLine(cmd *cobra.Command, what string, quiet bool) *progress.Line {
	return progress.New(cmd.ErrOrStderr(), what, progress.Options{Quiet: quiet})
}
