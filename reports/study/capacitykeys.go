package study

import (
	"fmt"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

// Check refuses a target search that cannot run on cfg: a rate that is
// not > 0, a Max below 1, or a field that is not a whole-number field of
// the server (the search sets the rate, the load and the seeds itself).
func (t Target) Check(cfg sim.Config) error {
	if !(t.Rate > 0) {
		return fmt.Errorf("--target-rate: expected a rate > 0 req/s, got %g", t.Rate)
	}
	if t.Max < 1 {
		return fmt.Errorf("--target-max: expected at least 1, got %d", t.Max)
	}
	if t.Field == "workload.rate" || t.Field == "workload.duration_s" || t.Field == "workload.requests" || t.Field == "seed" {
		return fmt.Errorf("--target-field %s: the search sets the rate, the load and the seeds itself; give a field of the server, such as cluster.replicas or tp", t.Field)
	}
	probe := cfg
	if err := scenario.Set(&probe, t.Field, "1"); err != nil {
		return fmt.Errorf("--target-field: %w", err)
	}
	if err := scenario.Set(&probe, t.Field, "1.5"); err == nil {
		return fmt.Errorf("--target-field %s: expected a whole-number field (the search tries 1, 2, ... --target-max), such as cluster.replicas", t.Field)
	}
	return nil
}

// CapacityKeys are the store keys and labels of a capacity study's units,
// one per configuration: the key hashes the configuration, the search, the
// SLO terms as given and the target.
func CapacityKeys(vs []scenario.Variant, s *Search, slo []string, t *Target) (keys, labels []string, err error) {
	for _, v := range vs {
		k, err := Key("capacity", struct {
			Config any      `json:"config"`
			Search *Search  `json:"search"`
			SLO    []string `json:"slo"`
			Target *Target  `json:"target"`
		}{v.Config, s, slo, t})
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		labels = append(labels, "configuration "+v.Name)
	}
	return keys, labels, nil
}
