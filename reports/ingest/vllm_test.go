package ingest_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itlsim/itlsim/reports"
	"github.com/itlsim/itlsim/reports/ingest"
	"github.com/itlsim/itlsim/sim"
)

// sharedData is the public measurements folder, beside the repository.
const sharedData = "../../../shared/data"

// vllmFiles are vLLM 0.8.3's benchmark_serving.py results of Llama-3.3-70B
// on 8 × A100-40GB (surajssd/llm-k8s, Apache-2.0).
func vllmFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sharedData, "streams/vllm_bench_llama33_70b_tp8_a100/*.json"))
	if len(files) == 0 {
		t.Skipf("no vLLM benchmark results in %s/streams", sharedData)
	}
	return files
}

// relEqual reports whether got equals want to relative precision tol.
func relEqual(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(got), math.Abs(want))
}

func analyzeFile(t *testing.T, path string, f ingest.Format) (*ingest.Recording, reports.Summary) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ingest.Parse(path, data, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%s: %d runs, want 1", path, len(recs))
	}
	m := sim.DefaultConfig().Metrics
	return &recs[0], reports.Summarize(recs[0].Result(m), m)
}

// TestVLLMEqualsItsOwnSummary checks, on every real vLLM result, that the
// figures reports.Summarize computes from the imported streams equal the
// mean/median/p99 vLLM wrote into the same file (numpy over the same lists)
// to floating-point precision: pooled ITL and TTFT to 1e-9 relative (the
// gaps and TTFTs are vLLM's own numbers). TPOT is held to 1e-6: vLLM 0.8
// reads the clock twice at the first chunk (once for the gaps, once more
// for ttft), so ttft + Σ itls, the E2EL the file allows, exceeds the
// latency vLLM divided by about 0.14 µs; TestVLLMMatchesIndependent
// checks TPOT against the definition to 1e-9.
func TestVLLMEqualsItsOwnSummary(t *testing.T) {
	for _, path := range vllmFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, _ := os.ReadFile(path)
			var want map[string]any
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			rec, s := analyzeFile(t, path, "")
			if rec.Format != ingest.FormatVLLM {
				t.Fatalf("detected %q, want vllm", rec.Format)
			}
			checks := []struct {
				key      string
				got, tol float64
			}{
				{"mean_itl_ms", s.ITLPooled.Mean, 1e-9}, {"median_itl_ms", s.ITLPooled.P50, 1e-9}, {"p99_itl_ms", s.ITLPooled.P99, 1e-9},
				{"mean_ttft_ms", s.TTFT.Mean, 1e-9}, {"median_ttft_ms", s.TTFT.P50, 1e-9}, {"p99_ttft_ms", s.TTFT.P99, 1e-9},
				{"mean_tpot_ms", s.TPOT.Mean, 1e-6}, {"median_tpot_ms", s.TPOT.P50, 1e-6}, {"p99_tpot_ms", s.TPOT.P99, 1e-6},
				{"request_throughput", s.RequestsPerS, 1e-9}, {"output_throughput", s.OutputTokensPerS, 1e-9},
				{"completed", float64(s.Finished), 0}, {"total_input_tokens", float64(s.InputTokens), 0},
				{"total_output_tokens", float64(s.OutputTokens), 0},
			}
			for _, c := range checks {
				w := want[c.key].(float64)
				rel := math.Abs(c.got/w - 1)
				if !relEqual(c.got, w, c.tol) {
					t.Errorf("%s: got %.17g, vLLM wrote %.17g (relative error %.3g > %g)", c.key, c.got, w, rel, c.tol)
				}
				t.Logf("%-19s itlsim %.17g  vLLM %.17g  relative error %.2g", c.key, c.got, w, rel)
			}
			if s.Failed != 0 || s.Requests != len(want["ttfts"].([]any)) {
				t.Errorf("requests %d (failed %d), want %d and none failed", s.Requests, s.Failed, len(want["ttfts"].([]any)))
			}
		})
	}
}

// numpyPercentile is numpy.percentile's default (linear) method, written
// out here independently of package quantile. xs must be sorted.
func numpyPercentile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-lo)*(xs[i+1]-xs[i])
}

// TestVLLMMatchesIndependent recomputes every per-stream figure of the
// README's definitions straight from the file's lists and checks that the
// summary equals it to 1e-9 relative.
func TestVLLMMatchesIndependent(t *testing.T) {
	m := sim.DefaultConfig().Metrics
	for _, path := range vllmFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, _ := os.ReadFile(path)
			var f struct {
				TTFTs      []float64   `json:"ttfts"`
				ITLs       [][]float64 `json:"itls"`
				OutputLens []int       `json:"output_lens"`
			}
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			var tpot, e2el, streamP99, maxGap []float64
			good, unstable := 0, 0
			for i, gaps := range f.ITLs {
				end := f.TTFTs[i]
				for _, g := range gaps {
					end += g
				}
				e2el = append(e2el, end*1000)
				if n := f.OutputLens[i]; n > 1 {
					tpot = append(tpot, (end-f.TTFTs[i])/float64(n-1)*1000)
				}
				if len(gaps) == 0 {
					good++
					continue
				}
				g := append([]float64(nil), gaps...)
				slices.Sort(g)
				p50, p99, mx := numpyPercentile(g, 50)*1000, numpyPercentile(g, 99)*1000, g[len(g)-1]*1000
				streamP99 = append(streamP99, p99)
				maxGap = append(maxGap, mx)
				if mx <= m.ITLGoodputMS {
					good++
				}
				if p99/p50 > m.UnstableJitter {
					unstable++
				}
			}
			for _, xs := range [][]float64{tpot, e2el, streamP99, maxGap} {
				slices.Sort(xs)
			}
			_, s := analyzeFile(t, path, ingest.FormatVLLM)
			checks := []struct {
				what      string
				got, want float64
			}{
				{"TPOT p50", s.TPOT.P50, numpyPercentile(tpot, 50)}, {"TPOT p99", s.TPOT.P99, numpyPercentile(tpot, 99)},
				{"E2EL p50", s.E2EL.P50, numpyPercentile(e2el, 50)}, {"E2EL p99", s.E2EL.P99, numpyPercentile(e2el, 99)},
				{"stream p99 ITL p50", s.StreamP99ITL.P50, numpyPercentile(streamP99, 50)},
				{"stream p99 ITL p99", s.StreamP99ITL.P99, numpyPercentile(streamP99, 99)},
				{"stream max gap p99", s.StreamMaxGap.P99, numpyPercentile(maxGap, 99)},
				{"stream max gap max", s.StreamMaxGap.Max, maxGap[len(maxGap)-1]},
				{"ITL goodput", s.ITLGoodput, float64(good) / float64(len(f.ITLs))},
				{"unstable share", s.UnstableStreamShare, float64(unstable) / float64(len(streamP99))},
			}
			for _, c := range checks {
				if !relEqual(c.got, c.want, 1e-9) {
					t.Errorf("%s: got %.17g, want %.17g", c.what, c.got, c.want)
				}
			}
		})
	}
}
