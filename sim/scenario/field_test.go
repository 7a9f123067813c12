package scenario_test

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/sim/scenario"
)

func TestField(t *testing.T) {
	c := sim.DefaultConfig()
	for _, tc := range []struct{ path, value, typ string }{
		{"workload.requests", "1000", "int"},
		{"seed", "1", "uint"},
		{"scheduler.policy", "chunked", "string"},
		{"workload.input_len", "lognormal:1024,1024,16,3072", "spec"},
		{"metrics.stall_threshold_ms", "250", "float"},
	} {
		v, typ, ok := scenario.Field(c, tc.path)
		if !ok || v != tc.value || typ != tc.typ {
			t.Errorf("Field(%s) = %q, %q, %v; want %q, %q", tc.path, v, typ, ok, tc.value, tc.typ)
		}
	}
	for _, p := range []string{"workload", "nope", "workload.classes"} {
		if _, _, ok := scenario.Field(c, p); ok {
			t.Errorf("Field(%s): ok for a section, list or unknown path", p)
		}
	}
}
