package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fidelityProfile is the roofline and server overhead fitted to the vLLM
// 70B run at 1 req/s only, with server.serial_us_per_prompt_token held at
// the cited 10 µs (itlsim calibrate qps_01.json ...
// --serial-us-per-prompt-token 10; see README).
const fidelityProfile = "../../reports/calibrate/testdata/vllm-0.8.3-llama-3.3-70b-a100-40gb-tp8.yaml"

// TestFidelityVLLM70B is the README's fidelity table: the four vLLM runs
// of Llama-3.3-70B on 8 × A100-40GB validated with the profile calibrated
// on the 1 req/s run, the warm cache modelled and the API server's serial
// tokenization at the cited 10 µs per prompt token (the profile's server
// section; README, "What the front end costs"). It holds the bounds the
// issue asks for: ITL p50 within 10 %, TTFT p50 within 20 % and per-stream
// p99 ITL p50 within 25 % at qps 4, 16 and inf.
func TestFidelityVLLM70B(t *testing.T) {
	files := vllm70B(t)
	args := append([]string{"validate"}, files...)
	args = append(args, "--model", "llama-3.3-70b", "--gpu", "a100-40gb", "--tp", "8", "--warm-cache", "--profile", fidelityProfile)
	md := mustRunCLI(t, append(args, "--format", "markdown")...).stdout
	md = strings.ReplaceAll(md, filepath.Dir(files[0])+string(filepath.Separator), "")
	golden := filepath.Join("testdata", "fidelity", "vllm-70b.md")
	got := "<!-- itlsim validate qps_{01,04,16,inf}.json --model llama-3.3-70b --gpu a100-40gb --tp 8 --warm-cache --profile " +
		filepath.Base(fidelityProfile) + " --format markdown; rewrite with: go test ./cmd/itlsim -run TestFidelity -update -->\n" + md
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", golden, got)
	}
	var doc struct {
		Runs []struct {
			Name    string `json:"name"`
			Figures []struct {
				Metric string   `json:"metric"`
				Error  *float64 `json:"error"`
			} `json:"figures"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, append(args, "--format", "json")...).stdout), &doc); err != nil {
		t.Fatal(err)
	}
	errOf := func(run int, metric string) float64 {
		for _, f := range doc.Runs[run].Figures {
			if f.Metric == metric && f.Error != nil {
				return *f.Error
			}
		}
		t.Fatalf("%s: no %s", doc.Runs[run].Name, metric)
		return 0
	}
	for run := 1; run <= 3; run++ {
		name := doc.Runs[run].Name
		if e := errOf(run, "itl_p50_ms"); math.Abs(e) > 0.10 {
			t.Errorf("%s: ITL p50 off by %+.1f%%, want within 10%%", name, e*100)
		}
		if e := errOf(run, "stream_p99_itl_p50_ms"); math.Abs(e) > 0.25 {
			t.Errorf("%s: per-stream p99 ITL p50 off by %+.1f%%, want within 25%%", name, e*100)
		}
		if e := errOf(run, "ttft_p50_ms"); math.Abs(e) > 0.20 {
			t.Errorf("%s: TTFT p50 off by %+.1f%%, want within 20%%", name, e*100)
		}
	}
}

// TestFrontEndFlags: the front end's fields are reachable as flags. A
// burst of 20 prompts of 1,000 tokens with 50 µs of serial tokenization per
// token queues 50 ms per request, so the last request reaches the
// scheduler a second after the burst (engine queueing, which it replaces,
// was less than the default 10 µs gives); a negative value is refused with
// the field's name.
func TestFrontEndFlags(t *testing.T) {
	base := []string{"run", "--requests", "20", "--rate", "100000", "--input-len", "fixed:1000", "--output-len", "fixed:4", "--format", "json"}
	maxTTFT := func(extra ...string) float64 {
		var doc struct {
			Runs []struct {
				Summary struct {
					TTFT struct {
						Max float64 `json:"max"`
					} `json:"ttft_ms"`
				} `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(mustRunCLI(t, append(base, extra...)...).stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Runs[0].Summary.TTFT.Max
	}
	off, on := maxTTFT(), maxTTFT("--serial-us-per-prompt-token", "50")
	if on < 1000 || on <= off {
		t.Errorf("max TTFT %.0f ms with 50 µs per prompt token, %.0f ms with the default 10: want ≥ 1,000 ms (20 requests × 50 ms of serial tokenization)", on, off)
	}
	if fixed := maxTTFT("--request-overhead-ms", "7"); math.Abs(fixed-off-7) > 0.01 {
		t.Errorf("max TTFT %.3f ms with a 7 ms fixed overhead, %.3f ms without", fixed, off)
	}
	r := execCLI(t, "run", "--requests", "5", "--serial-us-per-prompt-token", "-1")
	if r.code == 0 || !strings.Contains(r.stderr, "server.serial_us_per_prompt_token") {
		t.Errorf("--serial-us-per-prompt-token -1: exit %d, stderr %q; want an error naming the field", r.code, r.stderr)
	}
}

// TestFrontEndTokenizationByDefault: a default run pays vLLM's serial
// tokenization, 10 µs per prompt token, and 0 turns it off. Steps are
// priced by a linear model (1 ms plus 0.1 µs a prefill token) so that the
// engine's own share is small and exact. One request of 1,000 tokens: its
// TTFT is exactly 10 ms longer by default than with 0, and the same as with
// an explicit 10. A burst of 20 such prompts: by default the serial stage
// releases one every 10 ms, so the last reaches the scheduler 200 ms after
// the burst began; with 0 all 20 are prefilled in a few ms.
func TestFrontEndTokenizationByDefault(t *testing.T) {
	base := []string{"run", "--rate", "100000", "--input-len", "fixed:1000", "--output-len", "fixed:4", "--format", "json",
		"--cost-model", "linear", "--set", "cost.linear.c0_us=1000", "--set", "cost.linear.c1_us=0.1"}
	ttft := func(extra ...string) (lo, hi float64, serial float64) {
		var doc struct {
			Runs []struct {
				Config struct {
					Server struct {
						SerialUS float64 `json:"serial_us_per_prompt_token"`
					} `json:"server"`
				} `json:"config"`
				Summary struct {
					TTFT struct {
						Min float64 `json:"min"`
						Max float64 `json:"max"`
					} `json:"ttft_ms"`
				} `json:"summary"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(mustRunCLI(t, append(slices.Clone(base), extra...)...).stdout), &doc); err != nil {
			t.Fatal(err)
		}
		r := doc.Runs[0]
		return r.Summary.TTFT.Min, r.Summary.TTFT.Max, r.Config.Server.SerialUS
	}
	one, _, serial := ttft("--requests", "1")
	if serial != 10 {
		t.Errorf("default server.serial_us_per_prompt_token %g in the run's config, want 10", serial)
	}
	oneOff, _, serialOff := ttft("--requests", "1", "--serial-us-per-prompt-token", "0")
	if serialOff != 0 {
		t.Errorf("--serial-us-per-prompt-token 0: the run's config says %g", serialOff)
	}
	if d := one - oneOff; math.Abs(d-10) > 1e-6 {
		t.Errorf("one 1,000-token prompt: TTFT %.6f ms by default, %.6f ms with 0: differ by %.6f ms, want 10 (1,000 tokens × 10 µs)", one, oneOff, d)
	}
	if ten, _, _ := ttft("--requests", "1", "--serial-us-per-prompt-token", "10"); ten != one {
		t.Errorf("TTFT %.6f ms with an explicit 10 µs, %.6f ms by default: want equal", ten, one)
	}
	// --print-config shows the default, and a printed scenario with the
	// front end off keeps it off when read back (0 is not "the default").
	if out := mustRunCLI(t, "run", "--print-config").stdout; !strings.Contains(out, "\n  serial_us_per_prompt_token: 10\n") {
		t.Errorf("--print-config does not show the default serial_us_per_prompt_token: 10:\n%s", out)
	}
	scen := filepath.Join(t.TempDir(), "off.yaml")
	if err := os.WriteFile(scen, []byte(mustRunCLI(t, "run", "--print-config", "--serial-us-per-prompt-token", "0").stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRunCLI(t, "run", scen, "--print-config").stdout; !strings.Contains(out, "\n  serial_us_per_prompt_token: 0\n") {
		t.Errorf("a scenario printed with the front end off, read back:\n%s", out)
	}
	_, burst, _ := ttft("--requests", "20")
	_, burstOff, _ := ttft("--requests", "20", "--serial-us-per-prompt-token", "0")
	if burst < 200 || burst > 205 {
		t.Errorf("burst of 20: max TTFT %.2f ms by default, want 200-205 ms (20 × 10 ms of serial tokenization, then one short step)", burst)
	}
	if burstOff > 10 {
		t.Errorf("burst of 20: max TTFT %.2f ms with the front end off, want under 10 ms (three 1.8 ms prefill steps)", burstOff)
	}
}
