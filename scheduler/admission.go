package scheduler

import (
	"math"

	"github.com/itlsim/itlsim/kvcache"
)

// Verdict is the outcome of an admission decision.
type Verdict uint8

// Verdicts.
const (
	Admit  Verdict = iota // queue the arrival, or start the waiting request now
	Wait                  // leave the request waiting; try again next step
	Reject                // refuse the arrival; it is counted and reported
)

// Reason says why a request was refused or held back. The reports print it.
type Reason uint8

// Reasons. Add new ones at the end; NumReasons sizes per-reason counters.
const (
	ReasonNone        Reason = iota
	ReasonQueueFull          // max-queue: the queue was at its limit
	ReasonRateLimited        // token-bucket: the bucket was empty
	ReasonTooLong            // prompt + output exceed the model's context
	ReasonExceedsKV          // prompt + output need more blocks than the whole cache
	ReasonKVWatermark        // kv-watermark: starting would breach the watermark
	ReasonKVReserve          // kv-reserve: not enough unreserved blocks
	ReasonKVFull             // the first chunk's blocks are not free
	NumReasons
)

var reasonNames = [NumReasons]string{"", "queue-full", "rate-limited", "too-long", "exceeds-kv-capacity", "kv-watermark", "kv-reserve", "kv-full"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// ReasonNamed returns the reason whose String is name (not ReasonNone),
// for files that record rejections by name.
func ReasonNamed(name string) (Reason, bool) {
	for r := ReasonNone + 1; r < NumReasons; r++ {
		if reasonNames[r] == name {
			return r, true
		}
	}
	return ReasonNone, false
}

// ReasonNames lists the reasons' names, in order, ReasonNone left out.
func ReasonNames() []string { return append([]string(nil), reasonNames[1:]...) }

// Decision is an admission verdict with its reason.
type Decision struct {
	Verdict Verdict
	Reason  Reason
}

var admit = Decision{Verdict: Admit}

// View is what an admission rule may look at.
type View struct {
	Now     int64 // ns
	Waiting int   // requests in the queue, preempted ones included
	Running int
	KV      *kvcache.Manager // read only
}

// Admission decides, at arrival, whether a request enters the queue, and,
// at each step, whether the queue's head may start.
type Admission interface {
	// OnArrival returns Admit (queue it) or Reject.
	OnArrival(s *Seq, v *View) Decision
	// CanStart returns Admit or Wait for a waiting request whose first chunk
	// needs need more blocks.
	CanStart(s *Seq, need int, v *View) Decision
	// Started and Released tell the rule a request entered the running set
	// for the first time and left the system, for rules that hold state.
	Started(s *Seq, v *View)
	Released(s *Seq)
}

// Admission rule names.
const (
	AlwaysName      = "always"
	KVWatermarkName = "kv-watermark"
	KVReserveName   = "kv-reserve"
	MaxQueueName    = "max-queue"
	TokenBucketName = "token-bucket"
)

// always admits everything; a request starts when its first chunk's blocks are free.
type always struct{}

func newAlways(AdmissionConfig) Admission                  { return always{} }
func (always) OnArrival(*Seq, *View) Decision              { return admit }
func (always) CanStart(_ *Seq, need int, v *View) Decision { return fits(need, v) }
func (always) Started(*Seq, *View)                         {}
func (always) Released(*Seq)                               {}

func fits(need int, v *View) Decision {
	if need > v.KV.Free() {
		return Decision{Wait, ReasonKVFull}
	}
	return admit
}

// kvWatermark starts a request only if, after its first chunk's blocks,
// at least Watermark × total blocks remain free (vLLM v0 BlockSpaceManager).
type kvWatermark struct{ blocks float64 }

func newKVWatermark(c AdmissionConfig) Admission { return &kvWatermark{blocks: c.Watermark} }

func (*kvWatermark) OnArrival(*Seq, *View) Decision { return admit }
func (w *kvWatermark) CanStart(_ *Seq, need int, v *View) Decision {
	if float64(v.KV.Free()-need) < w.blocks*float64(v.KV.Total()) {
		return Decision{Wait, ReasonKVWatermark}
	}
	return admit
}
func (*kvWatermark) Started(*Seq, *View) {}
func (*kvWatermark) Released(*Seq)       {}

// kvReserve reserves, when a request first starts, the blocks for its whole
// prompt and projected output, and starts nothing that would over-commit
// the cache. If projections hold, running streams are never preempted; the
// price is requests waiting longer in the queue.
type kvReserve struct {
	outTokens int // projected output; 0 = the request's Output
	reserved  int // Σ blocks reserved by running requests
}

func newKVReserve(c AdmissionConfig) Admission { return &kvReserve{outTokens: c.ReserveOutputTokens} }

func (r *kvReserve) want(s *Seq, v *View) int {
	out := s.Output
	if r.outTokens > 0 {
		out = r.outTokens
	}
	return v.KV.BlocksFor(s.Prompt + out)
}

func (*kvReserve) OnArrival(*Seq, *View) Decision { return admit }
func (r *kvReserve) CanStart(s *Seq, need int, v *View) Decision {
	if s.Reserved > 0 { // resuming after a preemption: it holds its reservation
		return fits(need, v)
	}
	if r.reserved+r.want(s, v) > v.KV.Total() {
		return Decision{Wait, ReasonKVReserve}
	}
	return fits(need, v)
}
func (r *kvReserve) Started(s *Seq, v *View) {
	if s.Reserved == 0 {
		s.Reserved = r.want(s, v)
		r.reserved += s.Reserved
	}
}
func (r *kvReserve) Released(s *Seq) {
	r.reserved -= s.Reserved
	s.Reserved = 0
}

// maxQueue rejects arrivals while Limit requests wait.
type maxQueue struct{ limit int }

func newMaxQueue(c AdmissionConfig) Admission { return &maxQueue{limit: c.MaxQueue} }

func (q *maxQueue) OnArrival(_ *Seq, v *View) Decision {
	if v.Waiting >= q.limit {
		return Decision{Reject, ReasonQueueFull}
	}
	return admit
}
func (*maxQueue) CanStart(_ *Seq, need int, v *View) Decision { return fits(need, v) }
func (*maxQueue) Started(*Seq, *View)                         {}
func (*maxQueue) Released(*Seq)                               {}

// tokenBucket admits an arrival if a bucket refilled at TokensPerS and
// capped at BurstTokens holds its prompt + output tokens, as an API
// gateway's tokens-per-minute limit does.
type tokenBucket struct {
	rate, burst float64
	level       float64
	last        int64
}

func newTokenBucket(c AdmissionConfig) Admission {
	return &tokenBucket{rate: c.TokensPerS, burst: c.BurstTokens, level: c.BurstTokens}
}

func (b *tokenBucket) OnArrival(s *Seq, v *View) Decision {
	b.level = math.Min(b.burst, b.level+b.rate*float64(v.Now-b.last)/1e9)
	b.last = v.Now
	cost := float64(s.Prompt + s.Output)
	if cost > b.level {
		return Decision{Reject, ReasonRateLimited}
	}
	b.level -= cost
	return admit
}
func (*tokenBucket) CanStart(_ *Seq, need int, v *View) Decision { return fits(need, v) }
func (*tokenBucket) Started(*Seq, *View)                         {}
func (*tokenBucket) Released(*Seq)                               {}

var (
	_ Admission = always{}
	_ Admission = (*kvWatermark)(nil)
	_ Admission = (*kvReserve)(nil)
	_ Admission = (*maxQueue)(nil)
	_ Admission = (*tokenBucket)(nil)
)
