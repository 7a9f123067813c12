package specdecode

import (
	"math"

	"github.com/itlsim/itlsim/workloads/seed"
)

// Stream is one request's speculation state. The engine keeps it by value
// with the request and reuses it; drawing allocates nothing.
type Stream struct {
	rng       seed.Rand // the request's own random stream
	alpha     float64
	ood       bool // regime: in the out-of-distribution phase; ood-share: an OOD request
	phaseLeft int  // regime: tokens left in the current phase
	pos       int  // tokens generated so far
	output    int  // tokens the response will have (ood-region)

	win      [MaxWindow]uint8 // accepted drafts of the last verify steps
	winK     [MaxWindow]uint8 // drafted tokens of the last verify steps
	winN     int
	winI     int
	off      bool
	offSince int // pos when speculation stopped

	// FellBack is true once fallback has stopped the stream at least once.
	FellBack bool
}

// Model draws acceptances under one configuration. It is immutable and may
// be shared by concurrent runs.
type Model struct {
	cfg Config
	acc Acceptance
}

// New builds a model; cfg must be valid.
func New(cfg Config) *Model { return &Model{cfg: cfg, acc: cfg.Acceptance} }

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// geometric draws a phase length in tokens with the given mean (≥ 1).
func (s *Stream) geometric(mean float64) int {
	if mean <= 1 {
		return 1
	}
	u := s.rng.Open()
	n := math.Ceil(math.Log(u) / math.Log(1-1/mean))
	if !(n >= 1) {
		return 1
	}
	return int(min(n, 1e9))
}

// Start resets st for a new request with its own seed and response length.
// Every configuration seeds the same stream from the request's seed, so
// compared runs see the same acceptance luck.
func (m *Model) Start(st *Stream, reqSeed uint64, output int) {
	*st = Stream{rng: seed.Stream(reqSeed, "specdecode/acceptance"), output: max(output, 1)}
	a := &m.acc
	switch a.kind {
	case Beta:
		x, y := st.rng.Gamma(a.p[0]), st.rng.Gamma(a.p[1])
		st.alpha = x / (x + y)
	case Regime:
		st.phaseLeft = st.geometric(a.p[2])
	case OODShare:
		st.ood = st.rng.Float64() < a.p[2]
	}
}

// alpha is the acceptance probability of draft position j in the next step.
func (m *Model) alpha(st *Stream, j int) float64 {
	a := &m.acc
	switch a.kind {
	case IID:
		return a.p[0]
	case PositionDecay:
		return a.p[0] * math.Pow(a.p[1], float64(j))
	case Beta:
		return st.alpha
	case Regime, OODShare:
		if st.ood {
			return a.p[1]
		}
		return a.p[0]
	case OODRegion:
		f := float64(st.pos+j) / float64(st.output)
		if f >= a.p[2] && f < a.p[3] {
			return a.p[1]
		}
		return a.p[0]
	}
	return 0
}

// Draw returns how many of k drafted tokens the target accepts: drafts are
// accepted in order until the first rejection.
func (m *Model) Draw(st *Stream, k int) int {
	for j := range k {
		if st.rng.Float64() >= m.alpha(st, j) {
			return j
		}
	}
	return k
}

// Active reports whether the stream speculates in its next step.
func (m *Model) Active(st *Stream) bool {
	if !st.off {
		return true
	}
	if c := m.cfg.Fallback.CooldownTokens; c > 0 && st.pos-st.offSince >= c {
		st.off = false
		st.winN, st.winI = 0, 0
		return true
	}
	return false
}

// Record tells the stream that a step produced tokens tokens, of which
// accepted were drafts out of drafted (drafted 0: the stream did not
// speculate). It advances the phase and applies the fallback rule.
func (m *Model) Record(st *Stream, drafted, accepted, tokens int) {
	st.pos += tokens
	if m.acc.kind == Regime {
		st.phaseLeft -= tokens
		for st.phaseLeft <= 0 {
			st.ood = !st.ood
			mean := m.acc.p[2]
			if st.ood {
				mean = m.acc.p[3]
			}
			st.phaseLeft += st.geometric(mean)
		}
	}
	f := &m.cfg.Fallback
	if drafted == 0 || f.Window == 0 {
		return
	}
	st.win[st.winI], st.winK[st.winI] = uint8(accepted), uint8(drafted)
	st.winI = (st.winI + 1) % f.Window
	if st.winN < f.Window {
		st.winN++
	}
	if st.winN < f.Window {
		return
	}
	acc, dr := 0, 0
	for i := range f.Window {
		acc += int(st.win[i])
		dr += int(st.winK[i])
	}
	if float64(acc) < f.Threshold*float64(dr) {
		st.off, st.offSince, st.FellBack = true, st.pos, true
	}
}
