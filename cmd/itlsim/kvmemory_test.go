package main

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// The KV cache a scenario derives matches what vLLM 0.19.0 logged for the
// same model, GPU and settings ("GPU KV cache size: N tokens"; the rows and
// their sources are in sim/cost/testdata/vllm_kv_logs.csv).
func TestDerivedKVCacheMatchesVLLMLogs(t *testing.T) {
	for _, tt := range []struct {
		model      string
		vllmTokens int
	}{
		{"llama-3.1-8b", 476016},
		{"qwen2.5-7b", 1096000},
	} {
		t.Run(tt.model, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"run", "--print-config", "--model", tt.model, "--gpu", "h100-sxm-80gb", "--tp", "1",
				"--set", "kvcache.gpu_memory_utilization=0.95", "--set", "scheduler.max_num_batched_tokens=8192",
				"--set", "scheduler.max_num_seqs=1024"}
			if code := Main(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			m := regexp.MustCompile(`(?m)^\s*num_gpu_blocks: (\d+)$`).FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("no num_gpu_blocks in:\n%s", out.String())
			}
			blocks, _ := strconv.Atoi(m[1])
			errPct := 100 * (float64(blocks*16) - float64(tt.vllmTokens)) / float64(tt.vllmTokens)
			t.Logf("%s: %d blocks, %d tokens against vLLM's %d: %+.2f %%", tt.model, blocks, blocks*16, tt.vllmTokens, errPct)
			if math.Abs(errPct) > 1 {
				t.Errorf("%d tokens is %+.2f %% off vLLM's %d, beyond ±1 %%", blocks*16, errPct, tt.vllmTokens)
			}
		})
	}
}
