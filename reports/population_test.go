package reports

import (
	"reflect"
	"testing"

	"github.com/itlsim/itlsim/reports/qoe"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// A run's summary draws its populations from the result again when asked
// (Options.FromResult, as NewRun does) instead of keeping them: every
// percentile, goodput threshold, distribution and vllm figure is the same
// as from the kept populations, for the run and for each class, and the
// two summaries are Equal.
func TestSummaryFromResultMatchesKept(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests, cfg.Workload.Rate = 600, 40
	cfg.Workload.Classes = []workloads.Class{{Preset: "chat", Share: 0.7}, {Preset: "batch-report", Share: 0.3, SLO: workloads.ClassSLO{TTFTMS: 300}}}
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sink := qoe.NewSink(cfg.Metrics.QoE, ClassQoEs(cfg), nil)
	e.SetTimelineSink(sink)
	r := e.Run()
	sink.Apply(r)
	run := NewRun("x", nil, cfg, r)
	kept := SummarizeWith(r, cfg.Metrics, Options{ClassSLO: ClassSLOs(r, cfg)})
	keptClasses := ClassSummaries(r, cfg)
	kept.ByClass = keptClasses
	if run.Summary.pops.set.r == nil || kept.pops.set.r != nil {
		t.Fatal("NewRun's summary keeps its populations, or SummarizeWith's does not")
	}
	if len(keptClasses) != 2 || keptClasses["chat"].Requests == 0 {
		t.Fatalf("class summaries %v", keptClasses)
	}
	compare := func(name string, lazy, kept *Summary) {
		t.Helper()
		for p := range numPops {
			for _, q := range []float64{0, 10, 37.5, 50, 99, 99.9, 100} {
				a, aok := lazy.Percentile(p, q)
				b, bok := kept.Percentile(p, q)
				if a != b || aok != bok {
					t.Errorf("%s: population %d p%g: %g %v from the result, %g %v kept", name, p, q, a, aok, b, bok)
				}
			}
			if a, b := lazy.Dist(p), kept.Dist(p); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: population %d: Dist %+v from the result, %+v kept", name, p, a, b)
			}
		}
		for _, th := range []float64{0, 30, 123.4, 1e6} {
			a, aok := lazy.ITLGoodputAt(th)
			b, bok := kept.ITLGoodputAt(th)
			if a != b || aok != bok {
				t.Errorf("%s: ITL goodput at %g ms: %g from the result, %g kept", name, th, a, b)
			}
		}
		if !lazy.Equal(kept) {
			t.Errorf("%s: summaries not Equal", name)
		}
	}
	compare("run", &run.Summary, &kept)
	for name, c := range run.Summary.ByClass {
		compare(name, c, keptClasses[name])
	}
	if a, b := vllmBlock(&run.Summary, r.Pooled), vllmBlock(&kept, r.Pooled); len(a) != len(b) {
		t.Errorf("vllm blocks differ: %v, %v", a, b)
	} else {
		for k, v := range a {
			if b[k] != v {
				t.Errorf("vllm %s: %g from the result, %g kept", k, v, b[k])
			}
		}
	}
	if run.Summary.QoE.N == 0 || run.Summary.StreamsWithGaps == 0 {
		t.Fatalf("run has no scored or gapped streams: %+v", run.Summary.QoE)
	}
	// A summary of other streams is not Equal.
	other := SummarizeWith(r, cfg.Metrics, Options{})
	other.pops.sorted[PopTTFT] = append([]float64{-1}, other.pops.sorted[PopTTFT][1:]...)
	if run.Summary.Equal(&other) {
		t.Error("summaries with a different TTFT population are Equal")
	}
}
