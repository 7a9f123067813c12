package sim

import "github.com/itlsim/itlsim/workloads"

// frontedInFlight is the front end behind a client's in-flight cap
// (workloads.InFlight): the cap decides when a request is sent (its
// Arrival), the front end when it reaches the scheduler (Ready). It holds
// the next request once a slot is free, when its send time is final, and
// offers it at its Ready time.
type frontedInFlight struct {
	src  *workloads.InFlight
	fe   *frontEnd
	next workloads.Request
	has  bool
}

var _ workloads.Reactive = (*frontedInFlight)(nil)

func (f *frontedInFlight) NextAt() (int64, bool) {
	if !f.has {
		if !f.src.Next(&f.next) {
			return 0, false
		}
		f.fe.stage(&f.next)
		f.has = true
	}
	return max(f.next.Arrival, f.next.Ready), true
}

func (f *frontedInFlight) Next(r *workloads.Request) bool {
	if _, ok := f.NextAt(); !ok {
		return false
	}
	*r, f.has = f.next, false
	return true
}

func (f *frontedInFlight) Done(id int, at int64) { f.src.Done(id, at) }
func (f *frontedInFlight) Exhausted() bool       { return !f.has && f.src.Exhausted() }
func (f *frontedInFlight) Err() error            { return f.src.Err() }
func (f *frontedInFlight) Skipped() int          { return f.src.Skipped() }
