package cost

import (
	"fmt"
	"math"
)

// Settings is a scenario's cost section (sim.CostConfig): the step cost
// model and the server-side jitter sources.
type Settings struct {
	// Model is roofline (default) or linear.
	Model string `yaml:"model" json:"model"`
	// Profile is the path of a fitted profile (`itlsim calibrate -o FILE`)
	// whose cost model replaces this section's; "" for none. It is loaded
	// by the commands (the engine reads no files).
	Profile  string         `yaml:"profile" json:"profile"`
	Roofline RooflineConfig `yaml:"roofline" json:"roofline"`
	// Linear holds the linear model's coefficients. Given any, the ones
	// not given are 0; given none, sim.DefaultLinear's apply.
	Linear LinearConfig `yaml:"linear" json:"linear"`
	// NoiseCV is the coefficient of variation of a multiplicative, mean-one
	// lognormal noise on every step's duration. Default 0 (off).
	NoiseCV float64 `yaml:"noise_cv" json:"noise_cv"`
	// HiccupRatePerS is the rate of engine hiccups (a Poisson process in
	// simulated time); the step that starts after one is due is lengthened
	// by HiccupMS. Default 0 (off).
	HiccupRatePerS float64 `yaml:"hiccup_rate_per_s" json:"hiccup_rate_per_s"`
	// HiccupMS is the duration of one hiccup in milliseconds. Default 500.
	HiccupMS float64 `yaml:"hiccup_ms" json:"hiccup_ms"`
	// StepTimeScale multiplies every priced step's duration (its compute,
	// drafting and in-engine work; swaps, tier loads and hiccups are not
	// scaled): the knob a sensitivity analysis turns (validate and capacity
	// --sensitivity price at 0.98 and 1.02). Default 1; 0 is read as 1.
	StepTimeScale float64 `yaml:"step_time_scale" json:"step_time_scale"`
	// EnforceEager is vLLM's --enforce-eager: true runs every step eagerly,
	// false replays CUDA graphs for steps of at most the largest capture
	// size (the roofline only: a linear model's coefficients already carry
	// what the measured server ran). Default true (graphs off).
	EnforceEager bool `yaml:"enforce_eager" json:"enforce_eager"`
	// CUDAGraphCaptureSizes is vLLM's compilation_config
	// cudagraph_capture_sizes, in tokens per step; empty takes vLLM's
	// default for the scheduler's max_num_seqs and max_num_batched_tokens
	// (DefaultCaptureSizes: 1, 2, 4, 8, 16, 24, … 512).
	CUDAGraphCaptureSizes CaptureSizes `yaml:"cudagraph_capture_sizes" json:"cudagraph_capture_sizes"`
}

// Validate checks the cost settings.
func (c Settings) Validate() error {
	switch c.Model {
	case "roofline":
		if err := c.Roofline.Validate(); err != nil {
			return fmt.Errorf("cost.%w", err)
		}
	case "linear":
		if c.Linear == (LinearConfig{}) {
			break // none given: Resolve takes DefaultLinear
		}
		if err := c.Linear.Validate(); err != nil {
			return fmt.Errorf("cost.%w", err)
		}
	default:
		return fmt.Errorf("cost.model: must be roofline or linear, got %q", c.Model)
	}
	switch {
	case c.NoiseCV < 0 || c.NoiseCV > 10 || math.IsNaN(c.NoiseCV):
		return fmt.Errorf("cost.noise_cv: must be in [0,10], got %g", c.NoiseCV)
	case !(c.HiccupRatePerS >= 0 && c.HiccupRatePerS <= 1000):
		return fmt.Errorf("cost.hiccup_rate_per_s: must be in [0,1000] per second, got %g", c.HiccupRatePerS)
	case !(c.StepTimeScale >= 0 && c.StepTimeScale <= 10):
		return fmt.Errorf("cost.step_time_scale: must be in (0, 10] (0 is read as 1), got %g", c.StepTimeScale)
	case !(c.HiccupMS >= 0 && c.HiccupMS <= 3.6e6):
		return fmt.Errorf("cost.hiccup_ms: must be in [0, 3600000] ms (an hour), got %g", c.HiccupMS)
	}
	if err := ValidateCaptureSizes(c.CUDAGraphCaptureSizes); err != nil {
		return fmt.Errorf("cost.cudagraph_capture_sizes%w", err)
	}
	return nil
}
