package workloads

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
)

// Names of the arrival processes, the values of Config.Arrival.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
)

// arrivalProcess places request i on the clock. at is called for
// i = 0, 1, 2, ... in order and returns non-decreasing times in ns.
type arrivalProcess interface {
	at(i int, r *rand.Rand) float64
}

// arrivalProcesses is the registry of arrival processes, from name to a
// constructor taking the mean gap in ns; ArrivalNames and Validate derive
// the valid names from it.
func arrivalProcesses() map[string]func(gapNs float64) arrivalProcess {
	return map[string]func(gapNs float64) arrivalProcess{
		ArrivalPoisson:  func(gapNs float64) arrivalProcess { return &poisson{gapNs: gapNs} },
		ArrivalConstant: func(gapNs float64) arrivalProcess { return constant{gapNs: gapNs} },
	}
}

// ArrivalNames returns the valid values of Config.Arrival, sorted.
func ArrivalNames() []string {
	names := make([]string, 0, 2)
	for name := range arrivalProcesses() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// poisson is a Poisson process: independent exponential gaps of mean gapNs.
// The first request arrives at 0; the clock is kept in float64 ns so the
// rounding of each arrival to an integer never accumulates.
type poisson struct {
	gapNs float64
	t     float64
}

func (p *poisson) at(i int, r *rand.Rand) float64 {
	if i > 0 {
		p.t += r.ExpFloat64() * p.gapNs
	}
	return p.t
}

// constant spaces requests exactly gapNs apart, starting at 0. It draws
// nothing.
type constant struct {
	gapNs float64
}

func (c constant) at(i int, _ *rand.Rand) float64 { return float64(i) * c.gapNs }

// maxArrivalNs caps arrival times far below the int64 limit; Validate keeps
// the expected horizon a further factor of 40 below it.
const maxArrivalNs = 1 << 62

// generator is the Source New returns.
type generator struct {
	seed     uint64
	arrivals arrivalProcess
	// arrivalRNG and lengthRNG are independent streams, so a change to how
	// lengths are drawn never moves an arrival, and the other way round.
	arrivalRNG, lengthRNG *rand.Rand
	// limit is the number of requests, or 0 to stop at horizonNs.
	limit     int
	horizonNs float64
	input     Dist
	output    Dist
	table     *Lengths // when set, input and output are unused
	next      int      // ID of the next request
	done      bool
}

var _ Source = (*generator)(nil)

// New returns the Source of the workload c. seed is the workload's own seed
// (the caller derives it from the run seed for the "workload" subsystem).
// Inter-arrival gaps and lengths come from two streams derived from seed
// and the names "arrivals" and "lengths"; request i's Seed is
// RequestSeed(seed, i). New validates c and reads c.LengthsFile if set.
func New(c Config, seed uint64) (Source, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := &generator{
		seed:       seed,
		arrivals:   arrivalProcesses()[c.arrivalName()](1e9 / c.Rate),
		arrivalRNG: stream(seed, "arrivals"),
		lengthRNG:  stream(seed, "lengths"),
		limit:      c.Requests,
		horizonNs:  c.DurationS * 1e9,
		input:      c.InputLen,
		output:     c.OutputLen,
	}
	if c.LengthsFile != "" {
		table, err := ReadLengths(c.LengthsFile)
		if pathErr := (*fs.PathError)(nil); errors.As(err, &pathErr) {
			// Opening failed; say which setting named the file. Parse
			// errors already start with "file:line:".
			return nil, fmt.Errorf("workload.lengths_file: %w", err)
		}
		if err != nil {
			return nil, err
		}
		g.table = table
	}
	return g, nil
}

// Next implements Source.
func (g *generator) Next(r *Request) bool {
	if g.done || (g.limit > 0 && g.next >= g.limit) {
		g.done = true
		return false
	}
	t := g.arrivals.at(g.next, g.arrivalRNG)
	if g.limit == 0 && t >= g.horizonNs {
		g.done = true
		return false
	}
	var in, out int
	if g.table != nil {
		in, out = g.table.At(g.lengthRNG.IntN(g.table.Len()))
	} else {
		in = g.input.Sample(g.lengthRNG)
		out = g.output.Sample(g.lengthRNG)
	}
	*r = Request{
		ID:           g.next,
		Arrival:      int64(math.Round(min(t, maxArrivalNs))),
		InputTokens:  in,
		OutputTokens: out,
		Seed:         RequestSeed(g.seed, g.next),
	}
	g.next++
	return true
}
