package calibrate

import (
	"math"
	"testing"

	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

func TestOfferOf(t *testing.T) {
	cases := []struct {
		name string
		rec  ingest.Recording
		want Offer
		err  bool
	}{
		{"start times", ingest.Recording{}, Offer{Arrivals: FromFile}, false},
		{"poisson", ingest.Recording{NoArrivals: true, Load: ingest.Load{Strategy: ingest.StrategyPoisson, Rate: 4}}, Offer{Arrivals: PoissonAt, Rate: 4, Random: true}, false},
		{"inf", ingest.Recording{NoArrivals: true, Load: ingest.Load{Strategy: ingest.StrategyAllAtOnce}}, Offer{Arrivals: AllAtOnce}, false},
		{"inf capped", ingest.Recording{Load: ingest.Load{Strategy: ingest.StrategyAllAtOnce, Concurrency: 8}}, Offer{Arrivals: Closed, Concurrency: 8}, false},
		{"synchronous", ingest.Recording{Load: ingest.Load{Strategy: ingest.StrategyConcurrent, Concurrency: 1}}, Offer{Arrivals: Closed, Concurrency: 1}, false},
		{"nothing", ingest.Recording{NoArrivals: true}, Offer{}, true},
	}
	for _, c := range cases {
		got, err := OfferOf(&c.rec)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.err)
		}
	}
}

// TestClosedLoopCap: a concurrency cap never lets more requests in flight,
// and every request is served.
func TestClosedLoopCap(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear.C0US = 1000
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	rec := ingest.Recording{NoArrivals: true, Load: ingest.Load{Strategy: ingest.StrategyAllAtOnce, Concurrency: 3}}
	for i := range 20 {
		rec.Streams = append(rec.Streams, ingest.Stream{ID: i, InputTokens: 50 + i, OutputTokens: 5 + i%7})
	}
	o, _ := OfferOf(&rec)
	reqs := Requests(&rec, o, 1, 1)
	e, err := sim.NewFromSetup(setup, workloads.NewInFlight(&workloads.Slice{Requests: reqs}, o.Concurrency))
	if err != nil {
		t.Fatal(err)
	}
	peak := 0
	for e.Step() {
		peak = max(peak, e.Replica().Active())
	}
	if res := e.Result(); res.Finished != 20 {
		t.Errorf("%d finished of 20", res.Finished)
	}
	if peak != 3 {
		t.Errorf("peak %d in flight, want 3", peak)
	}
}

// TestValidateSensitivity: with every step priced by a constant and no
// front end, scaling step time scales every latency by as much, so each
// time figure's elasticity is 1 and throughput's about −1.
func TestValidateSensitivity(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear.C0US = 1000
	cfg.Server = sim.ServerConfig{}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	rec := ingest.Recording{NoArrivals: true, Load: ingest.Load{Strategy: ingest.StrategyAllAtOnce}}
	for i := range 20 {
		rec.Streams = append(rec.Streams, ingest.Stream{ID: i, InputTokens: 50 + i, OutputTokens: 5 + i%7})
	}
	cmps, err := Validate(setup, []ingest.Recording{rec}, Options{Seeds: 1, Sensitivity: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cmps[0].Figures {
		if f.Sensitivity == nil {
			t.Errorf("%s: no sensitivity", f.Metric)
			continue
		}
		want := 1.0
		if f.Metric == "requests_per_s" || f.Metric == "output_tokens_per_s" {
			want = -1
		}
		if math.Abs(*f.Sensitivity-want) > 0.01 {
			t.Errorf("%s: elasticity %g, want %g", f.Metric, *f.Sensitivity, want)
		}
	}
	if len(cmps[0].Notes) != 0 {
		t.Errorf("notes %q: nothing here is fragile", cmps[0].Notes)
	}
	if got := FragileNote("ttft_p99_ms", 14.2); got != "fragile: +1 % step time moves ttft_p99_ms by +14.2 % (beyond ±5 %/%)" {
		t.Errorf("FragileNote: %q", got)
	}
}
