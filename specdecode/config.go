package specdecode

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Method names.
const (
	None       = "none"
	DraftModel = "draft-model"
	NGram      = "ngram"
	EAGLE      = "eagle"
	MTP        = "mtp"
)

type method struct {
	doc string
	// defaultUS is the proposer's cost in µs: per draft token when
	// perToken, else once per step. draft-model is priced by the cost model.
	defaultUS float64
	perToken  bool
}

// methods is the registry of proposers. The cheap proposers' default costs
// are assumptions stated here, not measurements: an n-gram lookup is a CPU
// scan of the prompt (tens of µs per step); EAGLE and MTP heads are about
// one decoder layer run once per draft token.
var methods = map[string]method{
	None:       {"no speculation", 0, false},
	DraftModel: {"a small model drafts k tokens in k sequential steps, each priced by the cost model for that model", 0, true},
	NGram:      {"prompt-lookup n-gram proposer: one CPU lookup per step, 50 µs by default", 50, false},
	EAGLE:      {"EAGLE draft head: one light step per draft token, 200 µs each by default", 200, true},
	MTP:        {"multi-token-prediction heads: one step per draft token, 250 µs each by default", 250, true},
}

// Methods lists the proposer names, sorted.
func Methods() []string { return slices.Sorted(maps.Keys(methods)) }

// DescribeMethod returns a proposer's one-line description.
func DescribeMethod(name string) (string, bool) {
	m, ok := methods[name]
	return m.doc, ok
}

// MaxK bounds the draft length; MaxWindow the fallback window.
const (
	MaxK      = 16
	MaxWindow = 64
)

// Config is the scenario's spec_decode section.
type Config struct {
	// Method is the proposer: none (default), draft-model, ngram, eagle, mtp.
	Method string `yaml:"method" json:"method"`
	// K is the draft length, tokens per step (vLLM num_speculative_tokens). Default 4.
	K int `yaml:"k" json:"k"`
	// Acceptance is the acceptance model, e.g. iid:0.8 (see Kinds).
	Acceptance Acceptance `yaml:"acceptance" json:"acceptance"`
	// DraftModel is the draft-model proposer's model: a preset or
	// config.json. Other proposers ignore it, so one command can compare
	// draft-model with them.
	DraftModel string `yaml:"draft_model" json:"draft_model"`
	// ProposerUS is the cheap proposers' cost in µs (per draft token for
	// eagle and mtp, per step for ngram); 0 takes the method's default.
	ProposerUS float64 `yaml:"proposer_us" json:"proposer_us"`
	// DisableByBatchSize stops all speculation in a step whose running
	// batch has more sequences than this (vLLM's
	// speculative_disable_by_batch_size); 0 never disables.
	DisableByBatchSize int `yaml:"disable_by_batch_size" json:"disable_by_batch_size"`
	// Fallback stops speculating for a stream whose acceptance collapses.
	Fallback Fallback `yaml:"fallback" json:"fallback"`
}

// Fallback is the per-stream fallback rule.
type Fallback struct {
	// Window is how many of the stream's last verify steps are judged; 0 turns fallback off.
	Window int `yaml:"window" json:"window"`
	// Threshold: when accepted/drafted over the window falls below it, the
	// stream stops speculating. Default 0.5.
	Threshold float64 `yaml:"threshold" json:"threshold"`
	// CooldownTokens: the stream retries speculation after generating this
	// many tokens without it; 0 never retries.
	CooldownTokens int `yaml:"cooldown_tokens" json:"cooldown_tokens"`
}

// DefaultConfig has speculation off, with vLLM-like values ready for when
// a method is chosen.
func DefaultConfig() Config {
	return Config{Method: None, K: 4, Fallback: Fallback{Threshold: 0.5}}
}

// Enabled reports whether a proposer is configured.
func (c Config) Enabled() bool { return c.Method != "" && c.Method != None }

// Validate reports the first field with an impossible value.
func (c Config) Validate() error {
	if _, ok := methods[c.Method]; !ok && c.Method != "" {
		return fmt.Errorf("spec_decode.method: unknown proposer %q; valid: %s", c.Method, strings.Join(Methods(), ", "))
	}
	if !(c.Fallback.Threshold >= 0 && c.Fallback.Threshold <= 1) {
		return fmt.Errorf("spec_decode.fallback.threshold: must be in [0,1], got %g", c.Fallback.Threshold)
	}
	switch {
	case c.Fallback.Window < 0 || c.Fallback.Window > MaxWindow:
		return fmt.Errorf("spec_decode.fallback.window: must be in [0,%d] verify steps, got %d", MaxWindow, c.Fallback.Window)
	case c.Fallback.CooldownTokens < 0:
		return fmt.Errorf("spec_decode.fallback.cooldown_tokens: must be ≥ 0, got %d", c.Fallback.CooldownTokens)
	case c.DisableByBatchSize < 0:
		return fmt.Errorf("spec_decode.disable_by_batch_size: must be ≥ 0 (0 = never), got %d", c.DisableByBatchSize)
	case !(c.ProposerUS >= 0 && c.ProposerUS <= 1e6):
		return fmt.Errorf("spec_decode.proposer_us: must be in [0, 1e6] µs, got %g", c.ProposerUS)
	}
	if !c.Enabled() {
		return nil
	}
	switch {
	case c.K < 1 || c.K > MaxK:
		return fmt.Errorf("spec_decode.k: the draft length must be in [1,%d] tokens, got %d", MaxK, c.K)
	case c.Acceptance.IsZero():
		return fmt.Errorf("spec_decode.acceptance: %s needs an acceptance model, e.g. iid:0.8; valid: %s", c.Method, strings.Join(Kinds(), ", "))
	case c.Method == DraftModel && c.DraftModel == "":
		return fmt.Errorf("spec_decode.draft_model: the draft-model proposer needs a model, e.g. llama-3.2-1b")
	}
	return c.Acceptance.check()
}

// ProposerNS is the time a cheap proposer takes to draft k tokens, in ns
// (0 for none and for draft-model, which the engine prices with the cost
// model).
func (c Config) ProposerNS(k int) int64 {
	m := methods[c.Method]
	if c.Method == DraftModel || !c.Enabled() {
		return 0
	}
	us := m.defaultUS
	if c.ProposerUS > 0 {
		us = c.ProposerUS
	}
	if m.perToken {
		us *= float64(k)
	}
	return int64(us*1e3 + 0.5)
}
