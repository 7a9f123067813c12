package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/itlsim/itlsim/kvcache"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/workloads"
	"github.com/itlsim/itlsim/workloads/seed"
)

// Arrivals names how a measured run's requests are offered to the simulator.
type Arrivals string

// The arrival modes of an Offer.
const (
	// FromFile replays the file's own request start times.
	FromFile Arrivals = "file start times"
	// PoissonAt draws Poisson arrivals at the file's rate (one draw per seed).
	PoissonAt Arrivals = "poisson"
	// ConstantAt spaces the requests evenly at the file's rate.
	ConstantAt Arrivals = "constant"
	// AllAtOnce sends every request at time 0 (vLLM's rate "inf").
	AllAtOnce Arrivals = "all at once"
	// Closed sends the next request when one of Concurrency in flight ends
	// (a concurrency cap, GuideLLM's synchronous and concurrent).
	Closed Arrivals = "closed loop"
)

// Offer is how one measured run's requests are offered again.
type Offer struct {
	Arrivals Arrivals
	// Rate is requests/s for PoissonAt and ConstantAt.
	Rate float64
	// Concurrency caps the requests in flight; 0 for none.
	Concurrency int
	// Random is set when the arrivals are drawn, so that several seeds are
	// simulated and their spread reported.
	Random bool
}

func (o Offer) String() string {
	s := string(o.Arrivals)
	switch o.Arrivals {
	case PoissonAt, ConstantAt:
		s += fmt.Sprintf(" at %g req/s", o.Rate)
	}
	if o.Concurrency > 0 {
		s += fmt.Sprintf(", at most %d in flight", o.Concurrency)
	}
	return s
}

// maxArrivalSpanS is the longest span of drawn arrivals, seconds: the
// workloads' own limit (about 3 years).
const maxArrivalSpanS = 1e8

// OfferOf decides how to offer rec's requests: its start times when it has
// them and no concurrency cap; otherwise its recorded schedule. A file that
// records neither is an error naming what is missing.
func OfferOf(rec *ingest.Recording) (Offer, error) {
	l := rec.Load
	if p := l.Strategy == ingest.StrategyPoisson || l.Strategy == ingest.StrategyConstant; p && l.Concurrency == 0 && rec.NoArrivals {
		// Arrivals drawn at the file's rate must stay inside the
		// simulator's clock: 1e-12 req/s would place them past int64 ns.
		if span := float64(len(rec.Streams)) / l.Rate; !(span <= maxArrivalSpanS) {
			return Offer{}, fmt.Errorf("%s: request_rate %g: %d requests at that rate arrive over %.3g s, beyond the simulator's %.0g s: expected the rate the benchmark sent at",
				rec.File, l.Rate, len(rec.Streams), span, float64(maxArrivalSpanS))
		}
	}
	switch {
	case l.Strategy == ingest.StrategyConcurrent:
		return Offer{Arrivals: Closed, Concurrency: max(1, l.Concurrency)}, nil
	case !rec.NoArrivals && l.Concurrency == 0:
		return Offer{Arrivals: FromFile}, nil
	case l.Strategy == ingest.StrategyAllAtOnce:
		if l.Concurrency > 0 {
			return Offer{Arrivals: Closed, Concurrency: l.Concurrency}, nil
		}
		return Offer{Arrivals: AllAtOnce}, nil
	case l.Strategy == ingest.StrategyPoisson:
		return Offer{Arrivals: PoissonAt, Rate: l.Rate, Concurrency: l.Concurrency, Random: true}, nil
	case l.Strategy == ingest.StrategyConstant:
		return Offer{Arrivals: ConstantAt, Rate: l.Rate, Concurrency: l.Concurrency}, nil
	case !rec.NoArrivals:
		return Offer{Arrivals: FromFile}, nil
	}
	return Offer{}, fmt.Errorf("%s: the file records neither request start times nor a request rate or concurrency: cannot tell how its requests arrived", rec.File)
}

// Requests returns rec's requests as the simulator's, offered as o, the
// arrival draw seeded by runSeed. Lengths are the file's (an output of 0
// tokens, a failed stream's, cannot occur: failed requests are not
// streams). Content keys name each request's prompt by its position and
// length in the file, so that runs made back to back with the same prompts
// (vLLM bench with one dataset and seed) share prompt identities; outKey
// separates the runs' generated tokens.
func Requests(rec *ingest.Recording, o Offer, runSeed, outKey uint64) []workloads.Request {
	streams := rec.Streams
	order := make([]int, len(streams))
	for i := range order {
		order[i] = i
	}
	arrivals := make([]float64, len(streams))
	switch o.Arrivals {
	case FromFile:
		for i := range streams {
			arrivals[i] = streams[i].Arrival
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(arrivals[a], arrivals[b]) })
	case PoissonAt:
		r := seed.Stream(runSeed, "validate-arrivals")
		var t float64
		for i := range streams {
			arrivals[i] = t
			t += r.ExpFloat64() / o.Rate * 1e9
		}
	case ConstantAt:
		for i := range streams {
			arrivals[i] = float64(i) / o.Rate * 1e9
		}
	}
	reqs := make([]workloads.Request, len(streams))
	for k, i := range order {
		s := &streams[i]
		key := PromptKey(i, s.InputTokens)
		reqs[k] = workloads.Request{ID: k, Arrival: int64(math.Round(arrivals[i])), InputTokens: max(1, s.InputTokens),
			OutputTokens: max(1, s.OutputTokens), Seed: workloads.RequestSeed(runSeed, k),
			ContentKey: key, OutputKey: seed.Derive(outKey, "measured-output", i, s.InputTokens)}
	}
	return reqs
}

// PromptKey is the content identity Requests gives the prompt at position
// i of a measured file with n tokens.
func PromptKey(i, n int) uint64 {
	return seed.Derive(0, "measured-prompt", i, n)
}

// contentOf is the prefix-cache content Requests gives the prompt at
// position i of a file, n tokens long (generated tokens aside).
func contentOf(i, n int) kvcache.Content {
	return kvcache.Content{Prompt: n, Key: PromptKey(i, n)}
}
