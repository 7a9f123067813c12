package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// cpuProfile is the --cpuprofile flag every command takes: a Go CPU
// profile of the command, for `go tool pprof` (where a run spends its time:
// the engine, QoE scoring, writing files).
type cpuProfile struct {
	path string
	file *os.File
}

func (p *cpuProfile) bind(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.path, "cpuprofile", "", "write a Go CPU profile of the command to this file (read it with go tool pprof)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
}

func (p *cpuProfile) start() error {
	if p.path == "" {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(p.path)
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	p.file = f
	return nil
}

// stop ends the profile, whether the command succeeded or not.
func (p *cpuProfile) stop() error {
	if p.file == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.file.Close()
	p.file = nil
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	return nil
}
