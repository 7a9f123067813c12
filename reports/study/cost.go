package study

import (
	"fmt"
	"math"
	"strconv"
	"strings"

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
