package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports"
)

// versionText describes the build: the module version and the VCS
// revision the binary was built from (runtime/debug build info; "go run"
// and "go test" binaries carry no VCS stamp), the Go version and the JSON
// schema version.
func versionText() string {
	module, rev, dirty, gover := "(devel)", "unknown", "", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			module = bi.Main.Version
		}
		gover = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " (modified)"
				}
			}
		}
	}
	return fmt.Sprintf("itlsim %s, revision %s%s, %s, JSON schema %d", module, rev, dirty, gover, reports.SchemaVersion)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version, VCS revision and JSON schema version of this build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}
