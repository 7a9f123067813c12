package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/cost"
)

// Prices are GPU prices per GPU-hour in USD by preset name: the overrides
// given (--gpu-price NAME=USD), else the preset's (cost.GPUPrice).
type Prices map[string]float64

// For is the price of gpu, 0 when unknown.
func (p Prices) For(gpu string) float64 {
	if v, ok := p[strings.ToLower(gpu)]; ok {
		return v
	}
	if pr, ok := cost.GPUPrice(gpu); ok {
		return pr.USDPerGPUHour
	}
	return 0
}

// ParsePrices reads --gpu-price values, NAME=USD each. NAME is a GPU
// preset or any name a scenario gives its gpu field.
func ParsePrices(vals []string) (Prices, error) {
	p := Prices{}
	for _, s := range vals {
		name, usd, ok := strings.Cut(s, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("--gpu-price %q: expected NAME=USD per GPU-hour, e.g. h100-sxm-80gb=2.5", s)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(usd), "$")), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--gpu-price %q: expected a price > 0 USD per GPU-hour, got %q", s, usd)
		}
		p[name] = v
	}
	return p, nil
}

// CheckKnown refuses a price for a GPU that is neither a preset nor one a
// configuration of the study uses: a misspelt name would be silently
// ignored and the preset's price used.
func (p Prices) CheckKnown(cfgs []sim.Config) error {
	used := map[string]bool{}
	for _, c := range cfgs {
		used[strings.ToLower(c.GPU)] = true
		for _, pool := range c.Cluster.Pools {
			used[strings.ToLower(pool.GPU)] = true
		}
	}
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if _, ok := cost.LookupGPU(n); ok || used[n] {
			continue
		}
		return fmt.Errorf("--gpu-price %s=%g: no GPU named %q (GPU presets: %s)", n, p[n], n, strings.Join(cost.GPUNames(), ", "))
	}
	return nil
}

// USD is an amount in US dollars; 0 means unknown (no price) and is null
// in JSON, as every undefined figure of itlsim's JSON is.
type USD float64

// MarshalJSON writes the amount, or null when unknown.
func (u USD) MarshalJSON() ([]byte, error) {
	if !(u > 0) || math.IsInf(float64(u), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(u), 'g', -1, 64)), nil
}

// UnmarshalJSON reads an amount; null is unknown.
func (u *USD) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*u = 0
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("an amount in USD: %w", err)
	}
	*u = USD(v)
	return nil
}
