package kvlink

import (
	"strings"
	"testing"
)

// TestResolvedAndValidate: a preset fills only the figures left at zero,
// no preset is rdma, and each bad field is named.
func TestResolvedAndValidate(t *testing.T) {
	if got := (Config{}).Resolved(); got != (Config{Preset: "rdma", Gbps: 400, LatencyUS: 10}) {
		t.Errorf("the default link resolves to %+v, want rdma's figures", got)
	}
	if got := (Config{Preset: "tcp", Gbps: 10}).Resolved(); got.Gbps != 10 || got.LatencyUS != 100 {
		t.Errorf("tcp with gbps 10 resolves to %+v, want gbps 10 and tcp's 100 µs", got)
	}
	for _, tc := range []struct {
		c     Config
		field string
	}{
		{Config{Preset: "wifi"}, "cluster.kv_link.preset: unknown link \"wifi\"; valid: nvlink, rdma, tcp"},
		{Config{Gbps: -1}, "cluster.kv_link.gbps"},
		{Config{LatencyUS: 2e7}, "cluster.kv_link.latency_us"},
	} {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: got %v, want an error naming %s", tc.c, err, tc.field)
		}
	}
	if err := (Config{Preset: "nvlink", Layerwise: true}).Validate(); err != nil {
		t.Errorf("a valid link: %v", err)
	}
}
