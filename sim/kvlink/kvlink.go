package kvlink

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Config is the link between the prefill and decode pools.
type Config struct {
	// Preset names the link's technology: nvlink, rdma (the default) or
	// tcp; gbps and latency_us, when given, override its figures.
	Preset string `yaml:"preset" json:"preset,omitempty"`
	// Gbps is the link's bandwidth in gigabits per second.
	Gbps float64 `yaml:"gbps" json:"gbps,omitempty"`
	// LatencyUS is the time from a transfer's last byte leaving to its
	// landing, in microseconds (per transfer, not per layer).
	LatencyUS float64 `yaml:"latency_us" json:"latency_us,omitempty"`
	// Layerwise overlaps the transfer with the prefill's last step, layer
	// by layer, as vLLM's KV connectors that save each layer as it is
	// computed do.
	Layerwise bool `yaml:"layerwise" json:"layerwise,omitempty"`
}

// presets are round figures for one replica's share of each kind of
// link, per direction: NVLink 4 within an H100 node (450 GB/s), one
// 400 Gb/s InfiniBand NDR or RoCE NIC with GPUDirect RDMA, and a 100 Gb/s
// Ethernet NIC through the host's TCP stack (about a quarter of line rate
// in practice for one flow, hence 25).
var presets = map[string]Config{
	"nvlink": {Preset: "nvlink", Gbps: 3600, LatencyUS: 5},
	"rdma":   {Preset: "rdma", Gbps: 400, LatencyUS: 10},
	"tcp":    {Preset: "tcp", Gbps: 25, LatencyUS: 100},
}

// DefaultPreset is the link a disaggregated cluster uses unless told.
const DefaultPreset = "rdma"

// Presets lists the link presets' names.
func Presets() []string { return slices.Sorted(maps.Keys(presets)) }

// Validate names the bad field.
func (c Config) Validate() error {
	var errs []error
	if _, ok := presets[c.Preset]; c.Preset != "" && !ok {
		errs = append(errs, fmt.Errorf("cluster.kv_link.preset: unknown link %q; valid: %s", c.Preset, strings.Join(Presets(), ", ")))
	}
	if c.Gbps < 0 || c.Gbps > 1e6 {
		errs = append(errs, fmt.Errorf("cluster.kv_link.gbps: must be in (0, 1e6] Gb/s (0 takes the preset's), got %g", c.Gbps))
	}
	if c.LatencyUS < 0 || c.LatencyUS > 1e7 {
		errs = append(errs, fmt.Errorf("cluster.kv_link.latency_us: must be in [0, 1e7] µs (0 takes the preset's), got %g", c.LatencyUS))
	}
	return errors.Join(errs...)
}

// Resolved fills the preset's figures into the fields left at zero.
func (c Config) Resolved() Config {
	if c.Preset == "" {
		c.Preset = DefaultPreset
	}
	p := presets[c.Preset]
	if c.Gbps == 0 {
		c.Gbps = p.Gbps
	}
	if c.LatencyUS == 0 {
		c.LatencyUS = p.LatencyUS
	}
	return c
}
