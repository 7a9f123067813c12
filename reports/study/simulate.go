package study

import (
	"fmt"
	"io"
	"os"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/outfiles"
	"github.com/itlsim/itlsim/reports/progress"
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
//
// progress, when not nil, shows the requests ended across the runs.
func RunVariants(variants []scenario.Variant, withStreams bool, timelines *outfiles.File, line *progress.Line) ([]reports.Run, error) {
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
	line.Poll(func() progress.Status { return requestsEnded(variants, engines) })
	defer line.Done()
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

// requestsEnded is the requests the runs have ended, of the number they
// will end when every run's count is known. The engines' counts are read
// from another goroutine: the simulation itself never reads the wall
// clock.
func requestsEnded(variants []scenario.Variant, engines []*sim.Engine) progress.Status {
	st := progress.Status{Unit: "requests"}
	for i, e := range engines {
		st.Done += e.Progress()
		w := variants[i].Config.Workload
		if n := w.Requests; n > 0 && w.DrawsLengths() && st.Total >= 0 {
			st.Total += int64(n)
		} else {
			st.Total = -1
		}
	}
	if len(engines) > 1 {
		st.Note = fmt.Sprintf("%d runs", len(engines))
	}
	return st
}
