package qoe_test

import (
	"syscall"
	"testing"

	"github.com/itlsim/itlsim/reports/qoe"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
	"github.com/itlsim/itlsim/workloads"
)

// keeper keeps every timeline's chunk times (ns after the request) and
// tokens, as the Sink converts them, and counts runs of equal gaps.
type keeper struct {
	at     [][]float64
	tokens [][]int
	gaps   int
	runs   int
}

func (k *keeper) Stream(t *sim.Timeline) {
	if len(t.Chunks) == 0 {
		return
	}
	at, tok := make([]float64, len(t.Chunks)), make([]int, len(t.Chunks))
	for i, c := range t.Chunks {
		at[i], tok[i] = float64(c.At-t.Arrival), c.Tokens
		if i > 0 {
			k.gaps++
			if i == 1 || c.At-t.Chunks[i-1].At != t.Chunks[i-1].At-t.Chunks[i-2].At {
				k.runs++
			}
		}
	}
	k.at, k.tokens = append(k.at, at), append(k.tokens, tok)
}

// engineStreams runs the speed workload (Poisson 40 req/s, input normal
// 256/100 in 2..800, output normal 256/100 in 1..1024, seed 42) for n
// requests on cost model m ("" the default roofline; "linear" the default
// linear coefficients without the context term) and keeps its streams.
func engineStreams(b *testing.B, n int, m string) *keeper {
	cfg := sim.DefaultConfig()
	cfg.Seed = 42
	cfg.Workload.Arrival = workloads.ArrivalPoisson
	cfg.Workload.Rate = 40
	cfg.Workload.Requests = n
	cfg.Workload.InputLen = workloads.MustParseDist("normal:256,100,2,800")
	cfg.Workload.OutputLen = workloads.MustParseDist("normal:256,100,1,1024")
	if m == "linear" {
		l := sim.DefaultLinear()
		l.C3USPerDecodeContextToken, l.C4USPerPrefillTokenContext = 0, 0
		cfg.Cost.Model, cfg.Cost.Linear = "linear", cost.LinearConfig(l)
	}
	e, err := sim.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	k := &keeper{}
	e.SetTimelineSink(k)
	e.Run()
	if err := e.Err(); err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkScoreEngineStreams scores the streams of a 4,000-request run
// of the speed workload as the Sink does (Andes QoE, fluidity, the fluid
// token rate) under the default expectation (1 s, 6 tokens/s): ns/op is
// per stream. gaps/run is the mean length of the streams' runs of equal
// gaps, what scoring over runs of equal gaps could save: on the default
// roofline every step's time differs from the last (decode context grows
// by one), on a linear model without a context term only a change of
// batch shape changes it.
func BenchmarkScoreEngineStreams(b *testing.B) {
	for _, m := range []string{"roofline", "linear"} {
		b.Run(m, func(b *testing.B) {
			k := engineStreams(b, 4000, m)
			q := sim.DefaultQoE()
			e := qoe.Expectation{TTFT: q.ExpectedTTFTMS * 1e6, TokensPerS: q.TokensPerS}
			var sum float64
			i := 0
			cpu0 := cpuNS()
			for b.Loop() {
				s, _ := qoe.Score(e, k.at[i%len(k.at)], k.tokens[i%len(k.at)])
				sum += s.QoE + s.Fluidity + s.FluidRate
				i++
			}
			b.ReportMetric(float64(cpuNS()-cpu0)/float64(b.N), "cpu-ns/op")
			if !(sum > 0) {
				b.Fatal("no scores")
			}
			b.ReportMetric(float64(k.gaps)/float64(k.runs), "gaps/run")
			b.ReportMetric(float64(k.gaps)/float64(len(k.at)), "gaps/stream")
		})
	}
}

// cpuNS is the process's user and system CPU time so far, ns: on a shared
// machine a benchmark's CPU time varies less than its wall time.
func cpuNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
