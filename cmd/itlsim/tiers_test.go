package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// TestTierAndPauseErrors: bad offload tiers and preemption modes are
// refused with the field named.
func TestTierAndPauseErrors(t *testing.T) {
	bad := func(name, tiers string) string {
		return writeScenario(t, name+".yaml", "workload:\n  requests: 10\nkvcache:\n  tiers: "+tiers+"\n")
	}
	checkBadInput(t, []badInputCase{
		{"cpu not first", []string{"run", bad("order", "[{name: ssd, capacity_gib: 8, read_gbps: 5, write_gbps: 2}, {name: cpu, capacity_gib: 8, read_gbps: 25, write_gbps: 25}]")}, 1,
			[]string{"kvcache.tiers[1].name: the cpu tier must be the first"}},
		{"no capacity", []string{"run", bad("cap", "[{name: cpu, read_gbps: 25, write_gbps: 25}]")}, 1, []string{"kvcache.tiers[0].capacity_gib: must be in (0"}},
		{"no bandwidth", []string{"run", bad("bw", "[{name: cpu, capacity_gib: 4, write_gbps: 25}]")}, 1, []string{"kvcache.tiers[0].read_gbps"}},
		{"repeated name", []string{"run", bad("rep", "[{name: ssd, capacity_gib: 4, read_gbps: 5, write_gbps: 2}, {name: ssd, capacity_gib: 4, read_gbps: 5, write_gbps: 2}]")}, 1,
			[]string{"kvcache.tiers[1].name", "repeats"}},
		{"too small", []string{"run", bad("small", "[{name: cpu, capacity_gib: 0.0001, read_gbps: 25, write_gbps: 25}]")}, 1, []string{"kvcache.tiers[0].capacity_gib", "holds no KV block"}},
		{"without prefix caching", []string{"run", "--set", "kvcache.enable_prefix_caching=false", bad("apc", "[{name: cpu, capacity_gib: 4, read_gbps: 25, write_gbps: 25}]")}, 1,
			[]string{"kvcache.tiers", "enable_prefix_caching"}},
		{"unknown preemption", []string{"run", "--preemption", "stall", "--requests", "5"}, 1, []string{"scheduler.preemption: must be recompute, swap or pause"}},
	})
}

// TestTiersAndPauseThroughCLI: a run with offload tiers reports hits by
// tier in the JSON and the table, and a pause run counts its pauses.
func TestTiersAndPauseThroughCLI(t *testing.T) {
	scen := writeScenario(t, "tiers.yaml", `seed: 3
kvcache:
  num_gpu_blocks: 2000
  tiers:
    - {name: cpu, capacity_gib: 4, read_gbps: 25, write_gbps: 25}
    - {name: ssd, capacity_gib: 32, read_gbps: 6, write_gbps: 3}
workload:
  rate: 20
  requests: 150
compare:
  - scheduler.preemption=recompute,pause
`)
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	r := mustRunCLI(t, "run", scen, "--json", jsonPath)
	if !strings.Contains(r.stdout, "prefix hits by tier") || !strings.Contains(r.stdout, "pauses (holding blocks)") {
		t.Fatalf("table lacks the tier or pause rows:\n%s", r.stdout)
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc reports.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	rc, pa := runByName(t, doc, "recompute"), runByName(t, doc, "pause")
	if len(rc.PrefixCacheTiers) != 3 || rc.PrefixCacheTiers[0].Name != "gpu" || rc.PrefixCacheTiers[1].Name != "cpu" || rc.PrefixCacheTiers[2].Name != "ssd" {
		t.Fatalf("prefix_cache_tiers: %+v, want gpu, cpu, ssd", rc.PrefixCacheTiers)
	}
	if rc.PrefixCacheTiers[1].HitTokens == 0 || rc.TierLoadBytes == 0 {
		t.Errorf("recomputed streams found nothing in the cpu tier: %+v, %d bytes loaded", rc.PrefixCacheTiers, rc.TierLoadBytes)
	}
	if pa.Preemptions.Pause == 0 {
		t.Errorf("pause run did not pause: %+v", pa.Preemptions)
	}
	if rc.Preemptions.Pause != 0 || rc.StallMSByCause["kv-pause"] != 0 {
		t.Errorf("recompute run paused: %+v, kv-pause %.1f ms", rc.Preemptions, rc.StallMSByCause["kv-pause"])
	}
}
