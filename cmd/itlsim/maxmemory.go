package main

import (
	"github.com/spf13/cobra"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/memory"
)

// maxMemory is --max-memory: the cap on each engine's estimated memory
// (sim.MemoryEstimate), over which a scenario is refused before it runs.
type maxMemory int64

func (m *maxMemory) String() string {
	if *m == 0 {
		return memory.FormatBytes(sim.DefaultMaxMemory)
	}
	return memory.FormatBytes(float64(*m))
}

func (m *maxMemory) Set(s string) error {
	n, err := memory.ParseBytes(s)
	if err != nil {
		return err
	}
	*m = maxMemory(n)
	return nil
}

func (m *maxMemory) Type() string { return "size" }

func bindMaxMemory(cmd *cobra.Command, m *maxMemory) {
	cmd.Flags().Var(m, "max-memory", "refuse a scenario whose estimated memory (requests and KV blocks) is over this size: 8GiB, 512MiB, 2e10")
}
