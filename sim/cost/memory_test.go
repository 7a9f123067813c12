package cost

import (
	"strings"
	"testing"
)

func TestKVBlocks(t *testing.T) {
	m, _ := LookupModel("llama-3.1-8b")
	h100, _ := LookupGPU("h100-sxm-80gb")
	reserve := DefaultActivationReserve(m, 8192, 1)
	got, err := KVBlocks(m, h100, 1, 16, 0.9, reserve)
	if err != nil {
		t.Fatal(err)
	}
	// (80 GiB·0.9 − 16.06 GB − reserve) / (16 · 128 KiB).
	free := 80*float64(gib)*0.9 - float64(m.WeightBytes()) - float64(reserve)
	want := int(free / (16 * 131072))
	if got != want {
		t.Errorf("KVBlocks = %d, want %d", got, want)
	}
	// Tensor parallelism splits both the weights and the KV heads.
	got2, err := KVBlocks(m, h100, 2, 16, 0.9, reserve)
	if err != nil {
		t.Fatal(err)
	}
	if got2 <= 2*got {
		t.Errorf("tp=2 gives %d blocks, want more than twice tp=1's %d (weights split too)", got2, got)
	}
}

func TestKVBlocksErrors(t *testing.T) {
	l70, _ := LookupModel("llama-3.1-70b")
	l8, _ := LookupModel("llama-3.1-8b")
	a100, _ := LookupGPU("a100-40gb")
	tests := []struct {
		name    string
		m       ModelSpec
		tp      int
		util    float64
		reserve int64
		want    string
	}{
		{"70B on one 40GB", l70, 1, 0.9, 0,
			"llama-3.1-70b needs 131.4 GiB of weights per GPU at tp=1, a100-40gb has 36.0 GiB usable at gpu_memory_utilization 0.90"},
		{"reserve eats the rest", l8, 1, 0.9, 30 * gib, "activation reserve leaves 0.00 GiB, less than one 16-token KV block (2.0 MiB)"},
		{"bad util", l8, 1, 1.2, 0, "gpu_memory_utilization: must be in (0,1], got 1.2"},
		{"bad tp", l8, 0, 0.9, 0, "tensor_parallel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := KVBlocks(tt.m, a100, tt.tp, 16, tt.util, tt.reserve)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// The same 70B fits on eight of them.
	if n, err := KVBlocks(l70, a100, 8, 16, 0.9, DefaultActivationReserve(l70, 8192, 8)); err != nil || n < 10000 {
		t.Errorf("llama-3.1-70b on 8×a100-40gb: %d blocks, %v; want plenty", n, err)
	}
}

func TestKVBytesPerTokenPerGPU(t *testing.T) {
	m, _ := LookupModel("llama-3.1-8b") // 8 KV heads
	for _, tt := range []struct {
		tp   int
		want int64
	}{{1, 131072}, {2, 65536}, {8, 16384}, {16, 16384}} {
		if got := KVBytesPerTokenPerGPU(m, tt.tp); got != tt.want {
			t.Errorf("tp=%d: %d bytes, want %d", tt.tp, got, tt.want)
		}
	}
}

func TestDefaultActivationReserve(t *testing.T) {
	m, _ := LookupModel("llama-3.1-8b")
	got := float64(DefaultActivationReserve(m, 8192, 1)) / gib
	if got < 2.5 || got > 3.5 {
		t.Errorf("llama-3.1-8b at 8192 tokens: %.2f GiB, want about 3", got)
	}
	if a, b := DefaultActivationReserve(m, 2048, 1), DefaultActivationReserve(m, 8192, 1); a >= b {
		t.Errorf("reserve does not grow with the token budget: %d ≥ %d", a, b)
	}
}
