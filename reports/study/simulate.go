package study

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/outfiles"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// RunVariants runs every variant, in parallel up to the number of CPUs; each
// run is independent (no shared mutable state), so the results do not
// depend on the interleaving.
//
// With timelines non-nil, every finished stream's chunk times are written
// there, run after run in order: each run writes to its own temporary file
// (its streams can be many) and the files are concatenated at the end.
func RunVariants(variants []scenario.Variant, withStreams bool, timelines *outfiles.File, progress io.Writer) ([]reports.Run, error) {
	engines := make([]*sim.Engine, len(variants))
	for i, v := range variants {
		e, err := sim.New(v.Config)
		if err != nil {
			if len(variants) > 1 {
				return nil, fmt.Errorf("run %s: %w", v.Name, err)
			}
			return nil, err
		}
		engines[i] = e
	}
	var parts []*os.File
	var writers []*reports.TimelineWriter
	if timelines != nil {
		defer func() {
			for _, p := range parts {
				timelines.RemoveScratch(p)
			}
		}()
		for _, v := range variants {
			p, err := timelines.ScratchFile(".itlsim-timelines-")
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
			w := reports.NewTimelineWriter(p, v.Name)
			writers = append(writers, w)
		}
	}
	if progress != nil {
		stop := showProgress(progress, variants, engines)
		defer stop()
	}
	// Every finished stream is scored (QoE, fluidity) from its timeline,
	// which then goes on to --timelines.
	runs, _ := Map(len(variants), Workers(0), func(i int) (reports.Run, error) {
		var next sim.TimelineSink
		if writers != nil {
			next = writers[i]
		}
		res, err := RunScored(engines[i], true, next)
		if err != nil {
			return reports.Run{}, nil // a run's error is the engine's, read below
		}
		v := variants[i]
		ov := map[string]string{}
		for _, o := range v.Overrides {
			ov[o.Path] = o.Value
		}
		return RunReport(engines[i], v.Name, ov, res, withStreams), nil
	}, nil)
	for i, e := range engines {
		if err := e.Err(); err != nil {
			return nil, fmt.Errorf("run %s: %w", variants[i].Name, err)
		}
	}
	for _, w := range writers {
		if err := w.Flush(); err != nil {
			return nil, timelines.Fail(err)
		}
	}
	if timelines != nil {
		err := timelines.Write(func(f *os.File) error {
			for _, p := range parts {
				if _, err := p.Seek(0, io.SeekStart); err != nil {
					return err
				}
				if _, err := io.Copy(f, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// showProgress rewrites one stderr line every quarter second with how many
// requests each run has ended, until the returned stop is called. It is
// for terminals only: the simulation itself never reads the wall clock.
func showProgress(w io.Writer, variants []scenario.Variant, engines []*sim.Engine) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
				var b strings.Builder
				b.WriteString("\r\033[Ksimulating:")
				for i, e := range engines {
					fmt.Fprintf(&b, " %s %d", variants[i].Name, e.Progress())
					if n := variants[i].Config.Workload.Requests; n > 0 && variants[i].Config.Workload.DrawsLengths() {
						fmt.Fprintf(&b, "/%d", n)
					}
				}
				b.WriteString(" requests")
				fmt.Fprint(w, b.String())
			}
		}
	}()
	return func() { close(done); <-finished }
}
