package calibrate

import (
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
