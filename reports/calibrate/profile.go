package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// Profile is a fitted step cost model, the file `itlsim calibrate`
// writes and `run --profile FILE` (a scenario's cost.profile) loads. It
// replaces the scenario's cost model section, and its server section when
// it has one; the rest of the scenario stays.
type Profile struct {
	// Model, GPU and TP say what the profile was fitted for (informational:
	// loading it under another setup is allowed).
	Model string `yaml:"model,omitempty"`
	GPU   string `yaml:"gpu,omitempty"`
	TP    int    `yaml:"tp,omitempty"`
	// Source names the measurements it was fitted to.
	Source string      `yaml:"source,omitempty"`
	Cost   ProfileCost `yaml:"cost"`
	// Server is the fitted front-end overhead, when the fit had one.
	Server *sim.ServerConfig `yaml:"server,omitempty"`
	// Fit reports how well it fits (informational).
	Fit map[string]float64 `yaml:"fit,omitempty"`
}

// ProfileCost is the cost model section of a profile.
type ProfileCost struct {
	Model    string               `yaml:"model"` // roofline or linear
	Roofline *cost.RooflineConfig `yaml:"roofline,omitempty"`
	Linear   *cost.LinearConfig   `yaml:"linear,omitempty"`
	// The step-time variance, when the fit found any (calibrate --fit
	// cost.noise_cv, cost.hiccup_rate_per_s, cost.hiccup_ms): written only
	// when non-zero, so a profile without variance leaves the scenario's.
	NoiseCV        *float64 `yaml:"noise_cv,omitempty"`
	HiccupRatePerS *float64 `yaml:"hiccup_rate_per_s,omitempty"`
	HiccupMS       *float64 `yaml:"hiccup_ms,omitempty"`
}

// Validate reports the first impossible field.
func (p *Profile) Validate() error {
	switch p.Cost.Model {
	case "roofline":
		if p.Cost.Roofline == nil {
			return errors.New("cost.roofline: missing for cost.model roofline")
		}
		if err := p.Cost.Roofline.Validate(); err != nil {
			return fmt.Errorf("cost.%w", err)
		}
	case "linear":
		if p.Cost.Linear == nil {
			return errors.New("cost.linear: missing for cost.model linear")
		}
		if err := p.Cost.Linear.Validate(); err != nil {
			return fmt.Errorf("cost.%w", err)
		}
	default:
		return fmt.Errorf("cost.model: must be roofline or linear, got %q", p.Cost.Model)
	}
	c := sim.DefaultConfig().Cost
	if v := p.Cost.NoiseCV; v != nil {
		c.NoiseCV = *v
	}
	if v := p.Cost.HiccupRatePerS; v != nil {
		c.HiccupRatePerS = *v
	}
	if v := p.Cost.HiccupMS; v != nil {
		c.HiccupMS = *v
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if p.Server != nil {
		return p.Server.Validate()
	}
	return nil
}

// Apply puts the profile's cost model (and server overhead) into c.
func (p *Profile) Apply(c *sim.Config) {
	c.Cost.Model = p.Cost.Model
	if p.Cost.Roofline != nil {
		c.Cost.Roofline = *p.Cost.Roofline
	}
	if p.Cost.Linear != nil {
		c.Cost.Linear = *p.Cost.Linear
	}
	if v := p.Cost.NoiseCV; v != nil {
		c.Cost.NoiseCV = *v
	}
	if v := p.Cost.HiccupRatePerS; v != nil {
		c.Cost.HiccupRatePerS = *v
	}
	if v := p.Cost.HiccupMS; v != nil {
		c.Cost.HiccupMS = *v
	}
	if p.Server != nil {
		c.Server = *p.Server
	}
}

// LoadProfile reads a profile file; unknown fields and impossible values
// are errors naming the file.
func LoadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty profile: expected cost.model and its coefficients", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Cost.Roofline != nil {
		// A profile written before CUDA graphs were modelled has no graph
		// kernel floor; it takes the default rather than 0.
		var keys struct {
			Cost struct {
				Roofline map[string]any `yaml:"roofline"`
			} `yaml:"cost"`
		}
		if yaml.Unmarshal(data, &keys) == nil {
			if _, ok := keys.Cost.Roofline["graph_kernel_overhead_us"]; !ok {
				p.Cost.Roofline.GraphKernelOverheadUS = cost.DefaultRoofline().GraphKernelOverheadUS
			}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// ApplyProfile loads c.Cost.Profile, when set, into c.
func ApplyProfile(c *sim.Config) error {
	if c.Cost.Profile == "" {
		return nil
	}
	p, err := LoadProfile(c.Cost.Profile)
	if err != nil {
		return fmt.Errorf("cost.profile: %w", err)
	}
	p.Apply(c)
	return nil
}

// Write writes the profile as YAML with a comment naming its origin.
func (p *Profile) Write(w io.Writer, comment string) error {
	if comment != "" {
		fmt.Fprintf(w, "# %s\n", comment)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return err
	}
	return enc.Close()
}
