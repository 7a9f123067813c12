package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/scheduler"
	"github.com/itlsim/itlsim/scheduler/router"
	"github.com/itlsim/itlsim/sim/delivery"
	"github.com/itlsim/itlsim/specdecode"
	"github.com/itlsim/itlsim/workloads"
)

// TestHelpNamesRegistries: every name a registry holds (policies, rules,
// orders, victims, arrival processes, length distributions, trace and
// input formats, proposers, acceptance models, network and coalescing
// presets, routers) is in the --help of each flag that takes it, so a name
// added to a registry cannot be missing from the help.
func TestHelpNamesRegistries(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, newTempFiles())
	registries := []struct {
		flag  string
		names []string
	}{
		{"policy", scheduler.BatcherNames()},
		{"admission", scheduler.AdmissionNames()},
		{"queue", scheduler.OrderNames()},
		{"victim", scheduler.VictimNames()},
		{"arrival", workloads.ArrivalNames()},
		{"input-len", workloads.DistKinds()},
		{"workload-format", workloads.Formats()},
		{"spec-decode", specdecode.Methods()},
		{"spec-acceptance", specdecode.Kinds()},
		{"network", delivery.ProfileNames()},
		{"coalescing", delivery.CoalescingNames()},
		{"router", router.Names()},
		{"input-format", ingest.Formats()},
		{"replay-format", ingest.Formats()},
	}
	seen := map[string]int{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, r := range registries {
			f := c.Flags().Lookup(r.flag)
			if f == nil || f.Hidden {
				continue
			}
			seen[r.flag]++
			for _, n := range r.names {
				if !regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(n) + `($|[^a-z0-9-])`).MatchString(f.Usage) {
					t.Errorf("%s --%s: help %q does not name %q", c.CommandPath(), r.flag, f.Usage, n)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, r := range registries {
		if seen[r.flag] == 0 {
			t.Errorf("no command has a flag --%s", r.flag)
		}
	}
	// run's own page lists them where people read them.
	var help bytes.Buffer
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	run.SetOut(&help)
	if err := run.Help(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help.String(), "vllm-bench") {
		t.Errorf("run --help does not list the vllm-bench trace format")
	}
}
