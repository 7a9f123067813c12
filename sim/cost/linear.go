package cost

import "fmt"

// LinearConfig is a step-time regression over the batch features, in
// microseconds, for users who have fitted one to their own server (the
// form Vidur-style and BLIS-style simulators fit):
//
//	step = c0 + c1·prefill_tokens + c2·decode_seqs + c3·Σ decode context
//	          + c4·Σ prefill chunk tokens × context attended
//
// All coefficients default to 0; at least one must be positive.
type LinearConfig struct {
	// C0US is the fixed cost of every step, µs.
	C0US float64 `yaml:"c0_us" json:"c0_us"`
	// C1USPerPrefillToken is µs per prefill chunk token and per speculative
	// draft position verified (Batch.PrefillTokens + Batch.DecodeExtraTokens).
	C1USPerPrefillToken float64 `yaml:"c1_us" json:"c1_us"`
	// C2USPerDecodeSeq is µs per decoding sequence (Batch.DecodeSeqs).
	C2USPerDecodeSeq float64 `yaml:"c2_us" json:"c2_us"`
	// C3USPerDecodeContextToken is µs per token of decode context
	// (Batch.DecodeContext): the KV reads of decode attention.
	C3USPerDecodeContextToken float64 `yaml:"c3_us" json:"c3_us"`
	// C4USPerPrefillTokenContext is µs per prefill token × context token
	// (Batch.PrefillTokCtx): the quadratic attention of prefill.
	C4USPerPrefillTokenContext float64 `yaml:"c4_us" json:"c4_us"`
}

// maxLinearCoefUS bounds each coefficient: one second per unit is already
// absurd and keeps step times inside int64 for realistic batches.
const maxLinearCoefUS = 1e6

// Validate reports the first coefficient that is negative, not finite or
// absurdly large, or that all are zero.
func (c LinearConfig) Validate() error {
	coefs := []struct {
		name string
		v    float64
	}{
		{"c0_us", c.C0US},
		{"c1_us", c.C1USPerPrefillToken},
		{"c2_us", c.C2USPerDecodeSeq},
		{"c3_us", c.C3USPerDecodeContextToken},
		{"c4_us", c.C4USPerPrefillTokenContext},
	}
	positive := false
	for _, f := range coefs {
		if !(f.v >= 0 && f.v <= maxLinearCoefUS) {
			return fmt.Errorf("linear.%s: must be in [0,%g] µs, got %g", f.name, float64(maxLinearCoefUS), f.v)
		}
		positive = positive || f.v > 0
	}
	if !positive {
		return fmt.Errorf("linear: all coefficients are 0; set c0_us or another term positive")
	}
	return nil
}

// Linear prices a step with a LinearConfig.
type Linear struct {
	cfg  LinearConfig
	name string
}

// NewLinear validates cfg and returns the model.
func NewLinear(cfg LinearConfig) (*Linear, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Linear{cfg: cfg, name: fmt.Sprintf("linear(c0=%gus, c1=%gus, c2=%gus, c3=%gus, c4=%gus)",
		cfg.C0US, cfg.C1USPerPrefillToken, cfg.C2USPerDecodeSeq, cfg.C3USPerDecodeContextToken,
		cfg.C4USPerPrefillTokenContext)}, nil
}

// Name implements Model.
func (l *Linear) Name() string { return l.name }

// Config returns the coefficients.
func (l *Linear) Config() LinearConfig { return l.cfg }

// StepNS implements Model: 0 for an empty batch, otherwise the regression in
// nanoseconds, at least 1.
func (l *Linear) StepNS(b *Batch) int64 {
	if b.Tokens() <= 0 {
		return 0
	}
	c := &l.cfg
	us := c.C0US +
		c.C1USPerPrefillToken*float64(b.PrefillTokens+b.DecodeExtraTokens) +
		c.C2USPerDecodeSeq*float64(b.DecodeSeqs) +
		c.C3USPerDecodeContextToken*float64(b.DecodeContext) +
		c.C4USPerPrefillTokenContext*float64(b.PrefillTokCtx)
	return roundNS(us * 1e3)
}

var _ Model = (*Linear)(nil)
