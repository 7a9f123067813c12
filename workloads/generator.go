package workloads

import (
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// maxArrivalNs caps arrival times far below the int64 limit; Validate keeps
// the expected horizon a further factor of 40 below it.
const maxArrivalNs = 1 << 62

// maxTargetRate caps target_rate: a mean gap below 1 ns rounds arrivals
// together, so the rate reached would not be the rate asked for.
const maxTargetRate = 1e9

// generator is the Source of a synthetic workload.
type generator struct {
	seed     uint64
	arrivals arrivalProcess
	curve    curve // nil: constant rate
	// arrivalRNG and lengthRNG are independent streams, so a change to how
	// lengths are drawn never moves an arrival, and the other way round.
	arrivalRNG, lengthRNG *seed.Rand
	// limit is the number of requests, or 0 to stop at horizonNs.
	limit     int
	horizonNs float64
	input     Dist
	output    Dist
	table     *Lengths     // when set, input and output are unused
	classes   *classPicker // when set, lengths come from the drawn class
	next      int          // ID of the next request
	lastT     float64      // the previous arrival under a curve, ns
	done      bool
}

var _ Source = (*generator)(nil)

// New returns the Source of the workload c. seed is the workload's own seed
// (the caller derives it from the run seed for the "workload" subsystem).
//
// A synthetic workload draws inter-arrival gaps and lengths from two
// streams derived from seed and the names "arrivals" and "lengths";
// request i's Seed is RequestSeed(seed, i). A trace (c.Trace) is read as
// its format says (see Formats); its requests are numbered in replay order
// and seeded the same way. The transformations (window, sampling from the
// stream "sample", time scaling, length cap) apply last, to either.
//
// New validates c and reads every file c names: a lengths file or an
// empirical length distribution is loaded; a trace is read through once to
// check every row (so a malformed row is an error here, naming the file and
// line, not a silently short run) and is then streamed again by the Source.
func New(c Config, seed uint64) (Source, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.arrivalName() == ArrivalClosed {
		g, err := newGenerator(c, seed, "workload.lengths_file")
		if err != nil {
			return nil, err
		}
		return newClosedLoop(c, seed, g), nil
	}
	tr := newTransform(c, seed)
	build := func() (Source, error) {
		src, err := openBase(c, seed)
		if err != nil {
			return nil, err
		}
		return withSharing(src, c, seed), nil
	}
	if c.TargetRate > 0 {
		// Measure the rate of the windowed, sampled source, then replay it
		// scaled to the target: one more pass over a trace.
		src, err := build()
		if err != nil {
			return nil, err
		}
		m := tr
		m.scale = 1
		st := measure(m.wrap(src))
		if err := Err(src); err != nil {
			return nil, err
		}
		if st.n < 2 || st.last <= st.first {
			return nil, fmt.Errorf("workload.target_rate: rescaling needs at least two requests at distinct times; the source has %d", st.n)
		}
		rate := float64(st.n-1) / (float64(st.last-st.first) / 1e9)
		tr.scale = c.TargetRate / rate // arrivals are divided by scale
		if last := float64(st.last) / tr.scale; !(last <= maxArrivalNs) {
			return nil, fmt.Errorf("workload.target_rate: %g requests/s stretches the source's %d requests (%.3g requests/s) so the last arrives at %.3g s, "+
				"beyond the simulator's clock (%.3g s); give a higher rate", c.TargetRate, st.n, rate, last/1e9, float64(maxArrivalNs)/1e9)
		}
	}
	src, err := build()
	if err != nil {
		return nil, err
	}
	if !tr.identity() {
		src = tr.wrap(src)
	}
	return &capped{src: src}, nil
}

// capped ends a source with an error once it has given maxRequests
// requests: the bound checkCount applies up front, kept as the requests
// are made, for sources whose count is not known before (traces, a
// time-scaled or resampled source).
type capped struct {
	src Source
	n   int
	err error
}

func (c *capped) Next(r *Request) bool {
	if c.err != nil || !c.src.Next(r) {
		return false
	}
	if c.n++; c.n > maxRequests {
		c.err = fmt.Errorf("the workload gives more than %d requests (the simulator's limit): shorten it (workload.window_s, workload.sample)", maxRequests)
		return false
	}
	return true
}

// Close releases the underlying source's file, if any.
func (c *capped) Close() error {
	if cl, ok := c.src.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

func (c *capped) Err() error {
	if c.err != nil {
		return c.err
	}
	return Err(c.src)
}

// openBase returns the untransformed source of c.
func openBase(c Config, seed uint64) (Source, error) {
	if c.Trace == "" {
		return newGenerator(c, seed, "workload.lengths_file")
	}
	format, err := detectOrCheck(c)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatLengths:
		if c.Requests == 0 && c.DurationS == 0 {
			return nil, fmt.Errorf("workload.requests: a lengths trace takes its arrivals from the arrival process; one of requests and duration_s must be > 0")
		}
		g := c
		g.LengthsFile, g.Trace, g.Format = c.Trace, "", ""
		return newGenerator(g, seed, "workload.trace")
	case FormatVLLMBench:
		return readVLLMBench(c.Trace, seed)
	case FormatServeGen:
		m, err := ReadServeGen(c.Trace)
		if err != nil {
			return nil, err
		}
		if err := checkCount(c.Trace+": rate_rps × window length", m.ExpectedRequests()); err != nil {
			return nil, err
		}
		return m.Source(seed), nil
	}
	return openReplay(c.Trace, formats()[format].parse, c.WindowS, seed, c.SkipBadRows)
}

// newGenerator builds the synthetic source of a validated c, loading its
// lengths file (which lengthsField names in errors) and file-backed
// distributions.
func newGenerator(c Config, seed uint64, lengthsField string) (*generator, error) {
	p, err := arrivalProcesses()[c.arrivalName()].build(1e9/c.Rate, c)
	if err != nil {
		return nil, fmt.Errorf("workload.arrival: %w", err)
	}
	cv, err := parseCurve(c.RateCurve)
	if err != nil {
		return nil, fmt.Errorf("workload.rate_curve: %w", err)
	}
	g := &generator{
		seed:       seed,
		arrivals:   p,
		curve:      cv,
		arrivalRNG: stream(seed, "arrivals"),
		lengthRNG:  stream(seed, "lengths"),
		limit:      c.Requests,
		horizonNs:  c.DurationS * 1e9,
	}
	if c.LengthsFile != "" {
		table, err := ReadLengths(c.LengthsFile)
		if pathErr := (*fs.PathError)(nil); errors.As(err, &pathErr) {
			// Opening failed; say which setting named the file. Parse
			// errors already start with "file:line:".
			return nil, fmt.Errorf("%s: %w", lengthsField, err)
		}
		if err != nil {
			return nil, err
		}
		if table, err = table.Filter(c.LengthsFile, c.LengthsFilter); err != nil {
			return nil, err
		}
		g.table = table
		return g, nil
	}
	if cls, err := c.ResolveClasses(); err != nil {
		return nil, err
	} else if len(cls) > 0 {
		if g.classes, err = newClassPicker(cls, seed); err != nil {
			return nil, err
		}
		return g, nil
	}
	if g.input, err = c.InputLen.Load(); err != nil {
		return nil, fmt.Errorf("workload.input_len: %w", err)
	}
	if g.output, err = c.OutputLen.Load(); err != nil {
		return nil, fmt.Errorf("workload.output_len: %w", err)
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
	if g.curve != nil {
		t = g.curve.inverse(t)
		if math.IsInf(t, 1) || math.IsNaN(t) { // the curve fell to zero for good
			g.done = true
			return false
		}
		// A numerical inverse may step back by a fraction of a nanosecond;
		// arrivals never go backwards.
		t = max(t, g.lastT)
		g.lastT = t
	}
	if g.limit == 0 && t >= g.horizonNs {
		g.done = true
		return false
	}
	*r = g.request(g.next, t)
	g.next++
	return true
}

// request draws request id's lengths (and class) and stamps it with
// arrival time t (ns).
func (g *generator) request(id int, t float64) Request {
	var in, out, prio int
	class := ""
	if g.table != nil {
		in, out = g.table.At(g.lengthRNG.IntN(g.table.Len()))
	} else if p := g.classes; p != nil {
		k := p.pick()
		in, out = p.in[k].Sample(g.lengthRNG), p.out[k].Sample(g.lengthRNG)
		class, prio = p.classes[k].Name, p.classes[k].Priority
	} else {
		in = g.input.Sample(g.lengthRNG)
		out = g.output.Sample(g.lengthRNG)
	}
	return Request{
		ID:           id,
		Arrival:      int64(math.Round(min(t, maxArrivalNs))),
		InputTokens:  in,
		OutputTokens: out,
		Class:        class,
		Priority:     prio,
		Seed:         RequestSeed(g.seed, id),
	}
}
