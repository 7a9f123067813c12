package sim

import (
	"sync"

	"github.com/itlsim/itlsim/sim/quantile"
)

// Spares holds the 20 KB histograms of runs whose results have been read
// (their time series' ITL per bucket, ITL by position), for the engines
// built after them to take instead of allocating: a study runs hundreds
// of short runs of one configuration, and each would otherwise allocate
// (and the collector then reclaim) a new set. What an engine takes is
// emptied first, so its results are those of new histograms. The zero
// value is empty and ready; it is safe for concurrent use. Drop it to
// free what it holds.
type Spares struct {
	mu    sync.Mutex
	hists []*quantile.Histogram
	// reqs are request slots of ended runs, with the buffers their
	// streams' gaps, chunk sizes and stalls grew into.
	reqs []*request
}

// takeRequest returns a free request slot of an ended run, emptied as
// Replica.release leaves one and without speculation state; nil when sp
// has none (or is nil).
func (sp *Spares) takeRequest() *request {
	if sp == nil {
		return nil
	}
	return pop(&sp.mu, &sp.reqs)
}

// pop removes and returns the last of *s under mu; the zero T when *s is
// empty.
func pop[T any](mu *sync.Mutex, s *[]T) T {
	mu.Lock()
	defer mu.Unlock()
	var v T
	if n := len(*s); n > 0 {
		v, (*s)[n-1] = (*s)[n-1], v
		*s = (*s)[:n-1]
	}
	return v
}

// take returns an empty series histogram: a spare when sp has one, else a
// new one. A nil sp allocates.
func (sp *Spares) take() *quantile.Histogram {
	if sp != nil {
		if h := pop(&sp.mu, &sp.hists); h != nil {
			h.Reset()
			return h
		}
	}
	return quantile.NewHistogram(seriesBits)
}

// give adds hs (nil entries and other resolutions are skipped) to sp; a
// nil sp drops them.
func (sp *Spares) give(hs ...*quantile.Histogram) {
	if sp == nil {
		return
	}
	sp.mu.Lock()
	for _, h := range hs {
		if h != nil && h.Bits == seriesBits {
			sp.hists = append(sp.hists, h)
		}
	}
	sp.mu.Unlock()
}

// Len is the number of histograms sp holds.
func (sp *Spares) Len() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.hists)
}

// NewReusing is New with the engine's time-series and by-position
// histograms taken from sp while it has some. Call Release once its
// results have been read.
func NewReusing(cfg Config, sp *Spares) (*Engine, error) {
	s, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	return newFromSetup(s, nil, sp)
}

// Release gives the histograms of the engine's results (Result,
// ServerResult, every replica's) and its free request slots to the
// Spares it was built with
// (NewReusing; without one they are dropped). Neither the engine nor any
// result it returned may be read afterwards: what is given back is
// emptied and refilled by the next engine that takes it.
func (e *Engine) Release() {
	sp := e.spares
	release := func(r *Result) {
		if r == nil {
			return
		}
		for i := range r.Series.Buckets {
			b := &r.Series.Buckets[i]
			sp.give(b.ITL)
			b.ITL = nil
		}
		sp.give(r.Series.spare...)
		r.Series.spare = nil
		for i := range r.Position {
			sp.give(r.Position[i], r.PositionPerToken[i])
			r.Position[i], r.PositionPerToken[i] = nil, nil
		}
	}
	for _, r := range e.reps {
		if sp != nil {
			// The free slots only: an active one belongs to a stream the
			// run left unfinished.
			sp.mu.Lock()
			for _, i := range r.free {
				q := r.slots[i]
				q.spec = nil // another configuration's speculation state
				sp.reqs = append(sp.reqs, q)
				r.slots[i] = nil
			}
			sp.mu.Unlock()
			r.free = r.free[:0]
		}
		release(r.rec.res)
		if r.rec.client != nil {
			release(r.rec.client.res)
		}
	}
	release(e.res)
	if p := e.shared; p != nil {
		for i := range p.gap {
			sp.give(p.gap[i], p.tok[i])
			p.gap[i], p.tok[i] = nil, nil
		}
		if p.itl != nil {
			release(&Result{Series: *p.itl})
			p.itl = nil
		}
	}
}
