package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cpuProfile is the --cpuprofile flag every command takes: a Go CPU
// profile of the command, for `go tool pprof` (where a run spends its time:
// the engine, QoE scoring, writing files).
//
// The profile is an output like any other: checked before the command
// starts (against the files the command line names), written to a
// temporary file, checked again at the end against every input the
// command read, and only then renamed over its target.
type cpuProfile struct {
	temps  *tempFiles
	path   string
	files  *outputs
	out    *outFile
	direct *os.File // a FIFO or device written in place
}

func (p *cpuProfile) bind(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.path, "cpuprofile", "", "write a Go CPU profile of the command to this file (read it with go tool pprof)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return p.start(cmd, args) }
}

func (p *cpuProfile) start(cmd *cobra.Command, args []string) error {
	if p.path == "" {
		return nil
	}
	if p.temps == nil {
		p.temps = newTempFiles()
	}
	p.files = newOutputs(p.temps)
	p.out = p.files.Add("--cpuprofile", p.path)
	// The command has read nothing yet: what it will read or write is
	// named by its arguments and flags, so the profile must be none of them.
	p.files.ReadsHere("", args...)
	if err := p.files.Check(); err != nil {
		p.files.Discard()
		p.files = nil
		return err
	}
	var clash error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if clash != nil || f.Name == "cpuprofile" || f.Value.Type() != "string" {
			return
		}
		if sameFile(p.out.Target(), f.Value.String()) {
			clash = fmt.Errorf("--cpuprofile %s and --%s %s name the same file", p.path, f.Name, f.Value.String())
		}
	})
	if clash != nil {
		p.files.Discard()
		p.files = nil
		return clash
	}
	w := p.out.Temp()
	if p.out.Direct() {
		f, err := os.OpenFile(p.out.Target(), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			p.files.Discard()
			p.files = nil
			return p.out.Fail(err)
		}
		w = f
	}
	if err := pprof.StartCPUProfile(w); err != nil {
		p.files.Discard()
		p.files = nil
		return p.out.Fail(err)
	}
	if p.out.Direct() {
		p.direct = w
	}
	return nil
}

// sameFile tells whether the flag value v names target (a path that may
// not exist).
func sameFile(target, v string) bool {
	if v == "" {
		return false
	}
	if r, err := filepath.EvalSymlinks(v); err == nil {
		v = r
	}
	if a, err := filepath.Abs(v); err == nil {
		v = a
	}
	if v == target {
		return true
	}
	a, aerr := os.Stat(target)
	b, berr := os.Stat(v)
	return aerr == nil && berr == nil && os.SameFile(a, b)
}

// stop ends the profile, whether the command succeeded or not, and
// writes it unless it would replace one of the command's inputs.
func (p *cpuProfile) stop() error {
	if p.files == nil {
		return nil
	}
	pprof.StopCPUProfile()
	files := p.files
	p.files = nil
	defer files.Discard()
	if p.direct != nil {
		err := p.direct.Close()
		p.direct = nil
		if err != nil {
			return p.out.Fail(err)
		}
		return nil
	}
	if err := files.CheckInputs(); err != nil {
		return err
	}
	return files.Commit()
}
