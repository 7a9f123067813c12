package delivery

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The section decodes strictly from YAML over the defaults, distributions
// as scalars, and survives a JSON round trip (the resolved scenario).
func TestYAML(t *testing.T) {
	src := `
network:
  profile: mobile-4g
  jitter_ms: exp:4
  on_drop: fail
coalescing:
  preset: nagle
render:
  frame_ms: 16.7
smoothing:
  cadence_ms: 33
  depth_ms: 500
failover:
  watchdog_ms: 1500
  keep_primary: true
  backup:
    model: llama-3.1-70b
    gpu: h100-sxm-80gb
    tp: 4
    batch: 64
`
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, _ := cfg.Resolved()
	if r.Network.JitterMS.String() != "exp:4" || r.Network.BaseMS != 35 || r.Coalescing.Mode != ModeNagle ||
		r.Failover.Backup.TP != 4 || r.Failover.Backup.ContextTokens != 1024 || r.Smoothing.DepthMS != 500 || !r.Failover.KeepPrimary {
		t.Errorf("decoded %+v", r)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(js, &back); err != nil || back != r {
		t.Errorf("JSON round trip: %v\n%s", err, js)
	}
	out, _ := yaml.Marshal(r)
	if !bytes.Contains(out, []byte("jitter_ms: exp:4")) || bytes.Contains(out, []byte("primarymodel")) || !bytes.Contains(out, []byte("keep_primary: true")) {
		t.Errorf("YAML form:\n%s", out)
	}

	bad := yaml.NewDecoder(strings.NewReader("network:\n  jitter: exp:4\n"))
	bad.KnownFields(true)
	if err := bad.Decode(&cfg); err == nil || !strings.Contains(err.Error(), "field jitter not found") {
		t.Errorf("unknown field: %v", err)
	}
	if err := yaml.Unmarshal([]byte("network:\n  jitter_ms: gamma:1\n"), &cfg); err == nil || !strings.Contains(err.Error(), "unknown distribution kind") {
		t.Errorf("bad distribution: %v", err)
	}
}
