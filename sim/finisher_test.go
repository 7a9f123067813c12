package sim_test

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// timelineLog keeps every timeline the sink is handed, in order.
type timelineLog []sim.Timeline

func (l *timelineLog) Stream(t *sim.Timeline) {
	c := *t
	c.Chunks, c.Stalls = nil, nil // an empty list is no list
	if len(t.Chunks) > 0 {
		c.Chunks = slices.Clone(t.Chunks)
	}
	if len(t.Stalls) > 0 {
		c.Stalls = slices.Clone(t.Stalls)
	}
	*l = append(*l, c)
}

// TestFinisherIsTheSteppedRun: Run reduces ended streams on a second
// goroutine (the finisher) while the engine simulates on; stepping the
// engine by hand reduces each at once. Both give the same result, worst
// streams and timelines in the same order, on random single replicas and
// clusters (rejections, cancellations, speculation, preemption); a delivery
// path keeps Run on one goroutine, and its runs must agree too.
func TestFinisherIsTheSteppedRun(t *testing.T) {
	// The finisher runs when a core is spare: give the test two.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	async := 0
	for seed := range uint64(17) {
		cfg, desc := randomScenario(seed + 7000)
		if seed%2 == 1 {
			cfg, desc = randomCluster(seed + 7000)
		}
		sink := true
		if seed == 16 {
			// Worst streams without stalls and without a sink: an empty
			// stall list copied and a reused one must both be none.
			cfg, desc = randomCluster(2005)
			sink = false
		} else {
			cfg.Metrics.WorstStreams = 5
		}
		t.Run(desc, func(t *testing.T) {
			var reps [2][]sim.ReplicaReport
			run := func(step bool) (*sim.Result, timelineLog, bool) {
				e, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				var log timelineLog
				if sink {
					e.SetTimelineSink(&log)
				}
				if step {
					for e.Step() {
					}
					reps[1] = e.ReplicaReports()
					return e.Result(), log, false
				}
				res := e.Run()
				reps[0] = e.ReplicaReports()
				return res, log, e.ReducedAsync()
			}
			got, gotLog, on := run(false)
			want, wantLog, _ := run(true)
			if on {
				async++
			}
			if got.Streams.Len() == 0 {
				t.Fatal("no streams")
			}
			if !reflect.DeepEqual(got, want) {
				t.Error("Run and a stepped run give different results")
			}
			if !reflect.DeepEqual(reps[0], reps[1]) {
				t.Error("Run and a stepped run give different replica reports")
			}
			if !reflect.DeepEqual(gotLog, wantLog) {
				t.Errorf("Run and a stepped run hand the sink different timelines (%d and %d)", len(gotLog), len(wantLog))
			}
		})
	}
	if async < 4 {
		t.Errorf("only %d of 17 scenarios ran the finisher", async)
	}
}

// TestWholeStepsIsTheReference: the step end's loop for the whole-step
// token (wholeSteps) and the rest of the specialised step do what the
// reference step (Config.Reference) does — random scenarios and clusters
// (preemption, prefix caching, classes, speculation, noise) give the same
// results, replica reports and timelines, compared as values, and the
// loop takes a good share of their tokens. reports/study's
// TestReferencePath compares the documents' bytes.
func TestWholeStepsIsTheReference(t *testing.T) {
	var total, plain int64
	defer func() {
		if plain < total/4 {
			t.Errorf("the loop took %d of %d tokens: it is hardly tested", plain, total)
		}
	}()
	for seed := range uint64(14) {
		cfg, desc := randomScenario(seed + 9100)
		switch {
		case seed == 12: // the chat benchmark's workload, where the loop takes most tokens
			cfg, desc = chatConfig(400), "chat"
		case seed == 13:
			cfg, desc = chatConfig(800), "chat-cluster"
			cfg.Workload.Rate *= 4
			cfg.Cluster.Replicas = 4
		case seed%3 == 2:
			cfg, desc = randomCluster(seed + 9100)
		}
		t.Run(desc, func(t *testing.T) {
			var took int64
			run := func(on bool) (*sim.Result, []sim.ReplicaReport, timelineLog) {
				c := cfg
				c.Reference = !on
				e, err := sim.New(c)
				if err != nil {
					t.Fatal(err)
				}
				var log timelineLog
				e.SetTimelineSink(&log)
				for e.Step() {
				}
				if on {
					took = e.PlainRun()
				}
				reps := e.ReplicaReports()
				for i := range reps {
					reps[i].Setup = nil // the input, which differs in Reference
				}
				return e.Result(), reps, log
			}
			got, gotReps, gotLog := run(true)
			want, wantReps, wantLog := run(false)
			if got.Streams.Len() == 0 {
				t.Fatal("no streams")
			}
			total += got.OutputTokens
			plain += took
			if !reflect.DeepEqual(got, want) {
				t.Error("the results differ from the reference step's")
			}
			if !reflect.DeepEqual(gotReps, wantReps) {
				t.Error("the replica reports differ from the reference step's")
			}
			if !reflect.DeepEqual(gotLog, wantLog) {
				t.Error("the timelines differ from the reference step's")
			}
		})
	}
}
