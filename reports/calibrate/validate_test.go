package calibrate

import (
	"math"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
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

// TestValidateFrontEndSensitivity: a lone request's TTFT is its serial
// tokenization (500 tokens × 10 µs = 5 ms), the fixed latency (4 ms) and
// one 1 ms step, so its elasticity to each is that part's share of the
// 10 ms: 0.5 and 0.4. The per-request work is 0 and gets no column;
// detokenization off the engine's path neither.
func TestValidateFrontEndSensitivity(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Cost.Model = "linear"
	cfg.Cost.Linear.C0US = 1000
	cfg.Server = sim.ServerConfig{SerialUSPerPromptToken: 10, RequestOverheadMS: 4, DetokenizeUSPerOutputToken: 30}
	setup, err := cfg.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	cmps, err := Validate(setup, []ingest.Recording{spaced("one", []int{500})}, Options{Seeds: 1, Sensitivity: true})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := cmps[0].Figure("ttft_p50_ms")
	if math.Abs(f.Simulated-10) > 0.01 {
		t.Fatalf("TTFT %g ms, want 10", f.Simulated)
	}
	want := map[string]float64{"server.serial_us_per_prompt_token": 0.5, "server.request_overhead_ms": 0.4}
	if len(f.FrontEnd) != len(want) {
		t.Errorf("front-end elasticities %v, want only %v", f.FrontEnd, want)
	}
	for k, w := range want {
		if got, ok := f.FrontEnd[k]; !ok || math.Abs(got-w) > 0.01 {
			t.Errorf("%s: elasticity %v, want %v", k, got, w)
		}
	}
	if tp, _ := cmps[0].Figure("tpot_p50_ms"); tp.FrontEnd["server.serial_us_per_prompt_token"] != 0 {
		t.Errorf("TPOT moved with the front end: %v", tp.FrontEnd)
	}
	var b strings.Builder
	if err := WriteValidation(&b, cmps, reports.FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"sensitivity %/%", "front end per prompt token %/%", "front end fixed %/%", "+0.50", "+0.40"} {
		if !strings.Contains(b.String(), col) {
			t.Errorf("table lacks %q:\n%s", col, b.String())
		}
	}
	if strings.Contains(b.String(), "front end per request") {
		t.Errorf("a column for a constant at 0:\n%s", b.String())
	}
}
