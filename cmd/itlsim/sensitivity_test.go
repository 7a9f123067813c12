package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// saturatedRun writes a vLLM bench file of n requests of 512 prompt and
// 64 output tokens at rate req/s: served with a 64-token budget on the
// default GPU, 12 req/s is close to what the server can take.
func saturatedRun(t *testing.T, n int, rate float64) string {
	t.Helper()
	rep := func(s string) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	itl := "[" + strings.TrimSuffix(strings.Repeat("0.02,", 63), ",") + "]"
	doc := fmt.Sprintf(`{"backend": "vllm", "request_rate": %g, "duration": %g, "completed": %d,
  "input_lens": [%s], "output_lens": [%s], "ttfts": [%s], "itls": [%s],
  "generated_texts": [%s], "errors": [%s]}`, rate, float64(n)/rate, n,
		rep("512"), rep("64"), rep("0.05"), rep(itl), rep(`""`), rep(`""`))
	path := filepath.Join(t.TempDir(), fmt.Sprintf("sat_%g.json", rate))
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValidateSensitivity: validate --sensitivity gives every figure its
// elasticity to step time; decode figures move about as the steps do, and
// near saturation with a 64-token budget TTFT moves several times as much
// and is called fragile in words. Without the flag nothing changes.
func TestValidateSensitivity(t *testing.T) {
	file := saturatedRun(t, 400, 12)
	js := filepath.Join(t.TempDir(), "v.json")
	args := []string{"validate", file, "--max-num-batched-tokens", "64", "--seeds", "3"}
	plain := mustRunCLI(t, args...)
	if strings.Contains(plain.stdout, "sensitivity") || strings.Contains(plain.stdout, "fragile") {
		t.Errorf("without --sensitivity the output has a sensitivity:\n%s", plain.stdout)
	}
	r := mustRunCLI(t, append(args, "--sensitivity", "--json", js)...)
	if !strings.Contains(r.stdout, "sensitivity %/%") {
		t.Errorf("no sensitivity column:\n%s", r.stdout)
	}
	// The default front end tokenizes at 10 µs per prompt token: its
	// column is beside step time's; the fixed latency, 0, has none.
	if !strings.Contains(r.stdout, "front end per prompt token %/%") || strings.Contains(r.stdout, "front end fixed") {
		t.Errorf("want a front-end column for the per-token cost alone:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "note: fragile: +1 % step time moves ttft_p50_ms by +") {
		t.Errorf("no fragile note for TTFT p50:\n%s", r.stdout)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Figures []struct {
				Metric      string
				Sensitivity *float64           `json:"sensitivity_pct_per_pct"`
				FrontEnd    map[string]float64 `json:"frontend_sensitivity_pct_per_pct"`
			}
			Notes []string
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	el := map[string]float64{}
	for _, f := range doc.Runs[0].Figures {
		if f.Sensitivity == nil {
			t.Errorf("%s: no sensitivity_pct_per_pct", f.Metric)
			continue
		}
		el[f.Metric] = *f.Sensitivity
		if _, ok := f.FrontEnd["server.serial_us_per_prompt_token"]; !ok {
			t.Errorf("%s: no frontend_sensitivity_pct_per_pct for the per-token cost: %v", f.Metric, f.FrontEnd)
		}
	}
	if e := el["tpot_p50_ms"]; math.Abs(e-1) > 0.1 {
		t.Errorf("TPOT p50 elasticity %g, want about 1 (decode steps slow down 1:1)", e)
	}
	if e := el["ttft_p50_ms"]; e <= 5 {
		t.Errorf("TTFT p50 elasticity %g near saturation, want beyond 5 %%/%%", e)
	}
	// The first run's figures stand: the sensitivity adds to the output.
	if !strings.Contains(r.stdout, strings.Split(plain.stdout, "\n")[3]) {
		t.Errorf("--sensitivity changed the overview row:\n%s\nwant\n%s", r.stdout, plain.stdout)
	}
}

// TestCapacitySensitivity: capacity --sensitivity reports max_rate's
// elasticity to step time per configuration in the table, the JSON and the
// CSV; a stability-limited server loses capacity about as its steps slow
// (elasticity near −1). It refuses --target-rate.
func TestCapacitySensitivity(t *testing.T) {
	dir := t.TempDir()
	js, cs, hs := filepath.Join(dir, "c.json"), filepath.Join(dir, "c.csv"), filepath.Join(dir, "c.html")
	args := []string{"capacity", "--requests", "600", "--seeds", "2", "--slo", "ttft:p99<=1s", "--max-num-batched-tokens", "2048"}
	plain := mustRunCLI(t, args...)
	if strings.Contains(plain.stdout, "sensitivity") {
		t.Errorf("without --sensitivity the table has a sensitivity column:\n%s", plain.stdout)
	}
	r := mustRunCLI(t, append(args, "--sensitivity", "--json", js, "--csv", cs, "--html", hs)...)
	if !strings.Contains(r.stdout, "sensitivity %/%") {
		t.Errorf("no sensitivity column:\n%s", r.stdout)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Capacity []struct {
			MaxRate     float64   `json:"max_rate"`
			Sensitivity *float64  `json:"sensitivity_pct_per_pct"`
			Rates       []float64 `json:"sensitivity_rates"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Capacity[0]
	if c.Sensitivity == nil || len(c.Rates) != 2 {
		t.Fatalf("capacity %+v: want sensitivity_pct_per_pct and two sensitivity_rates", c)
	}
	if e := *c.Sensitivity; e > -0.5 || e < -3 {
		t.Errorf("max_rate elasticity %g, want about −1 (slower steps, less capacity)", e)
	}
	if !(c.Rates[0] > c.Rates[1]) {
		t.Errorf("rates with faster / slower steps %v: want the faster higher", c.Rates)
	}
	f, err := os.Open(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := rows[0]; h[len(h)-1] != "sensitivity_pct_per_pct" || rows[1][len(h)-1] == "" {
		t.Errorf("CSV %v: want a filled sensitivity_pct_per_pct column last", rows[:2])
	}
	if h, err := os.ReadFile(hs); err != nil || !strings.Contains(string(h), "sensitivity %/%") {
		t.Errorf("HTML report lacks the sensitivity column (%v)", err)
	}
	bad := execCLI(t, "capacity", "--requests", "100", "--target-rate", "5", "--sensitivity")
	if bad.code == 0 || !strings.Contains(bad.stderr, "--sensitivity") {
		t.Errorf("--sensitivity with --target-rate: exit %d, stderr %q", bad.code, bad.stderr)
	}
}
