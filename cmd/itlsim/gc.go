package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target (GOGC) the CLI runs with:
// the heap may grow 25 % over what the last collection found live before
// the next one, against Go's default 100 %. A long run's live heap is
// mostly its finished requests' summaries (144 bytes each), which hold no
// pointers: the collector does not scan them, so collecting more often
// costs little (a million-request run with --json and --streams collects
// 98 times instead of 26, 0.31 s of collector CPU time instead of 0.08 s
// in about 60 s) and peak memory stays near the live heap instead of
// twice it (see the README's Speed and memory section). GOGC in the
// environment, when set, wins.
const gcPercent = 25

// setGCPercent applies gcPercent unless GOGC is set.
func setGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

// studyGCPercent is the collector's target for capacity and sweep, which
// run many short simulations one after another. Each probe's live heap is
// small, but it allocates afresh, so at 25 % the collector ran about 400
// times in one default capacity search. Six paired whole-process runs of
// that search on a loaded 2-core machine took 2.96–3.53 s of CPU at 25 %
// and 2.07–2.50 s at 100 % (ratio 0.62–0.79 pair by pair), peaking at
// 40–42 MiB and 46–52 MiB (docs/benchmarks-log.md). GOGC in the
// environment, when set, still wins.
const studyGCPercent = 100

// setStudyGCPercent applies studyGCPercent unless GOGC is set.
func setStudyGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(studyGCPercent)
	}
}
