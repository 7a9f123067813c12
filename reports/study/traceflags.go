package study

import (
	"fmt"

	"github.com/itlsim/itlsim/sim/scenario"
	"github.com/itlsim/itlsim/workloads"
)

// generatorFlags set how generated requests arrive and how long they are
// (flag → field): a trace with its own arrival times has no use for them.
var generatorFlags = [][2]string{{"requests", "workload.requests"}, {"rate", "workload.rate"}, {"duration", "workload.duration_s"},
	{"arrival", "workload.arrival"}, {"input-len", "workload.input_len"}, {"output-len", "workload.output_len"}}

// CheckTraceFlags refuses generator settings given as flags (changed
// tells whether a flag was given) with a trace
// that has its own arrival times (every format but lengths), which would
// ignore them; and, when the scenario file names the trace itself
// (fileTrace), generator fields the file gives beside it. (A file's own
// generator, replaced by --workload on the command line, is no conflict.)
func CheckTraceFlags(variants []scenario.Variant, file scenario.File, fileTrace bool, args []string, changed func(flag string) bool) error {
	for _, v := range variants {
		trace := v.Config.Workload.Trace
		if trace == "" {
			continue
		}
		format := v.Config.Workload.Format
		if format == "" {
			var err error
			if format, err = workloads.DetectFormat(trace); err != nil {
				continue // reading the trace will say what is wrong
			}
		}
		if format == workloads.FormatLengths {
			continue
		}
		for _, g := range generatorFlags {
			name, path := g[0], g[1]
			what := ""
			switch {
			case changed(name):
				what = "--" + name
			case fileTrace && file.Sets(path):
				what = args[0] + ": " + path
			default:
				continue
			}
			return fmt.Errorf("%s: the trace %s (%s) has its own arrival times and lengths, so %s would be ignored; "+
				"change a trace's load with workload.target_rate, time_scale, window_s or sample (--set workload.target_rate=R)",
				what, trace, format, path)
		}
	}
	return nil
}
