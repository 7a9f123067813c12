package cost

import (
	"slices"
	"testing"
)

func decodes(n, context int) Batch {
	var b Batch
	for range n {
		b.AddDecode(context)
	}
	return b
}

func mustGraphs(t *testing.T, r *Roofline, sizes []int) *Roofline {
	t.Helper()
	g, err := r.WithCUDAGraphs(sizes)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// vLLM's default capture list (vllm/config/vllm.py): 1, 2, 4, the multiples
// of 8 below 256, the multiples of 16 from 256, up to
// min(2·max_num_seqs, 512, max_num_batched_tokens).
func TestDefaultCaptureSizesAreVLLMs(t *testing.T) {
	s := DefaultCaptureSizes(1024, 8192)
	if len(s) != 3+31+17 || s[0] != 1 || s[3] != 8 || s[4] != 16 || s[5] != 24 || s[33] != 248 || s[34] != 256 || s[35] != 272 || s[len(s)-1] != 512 {
		t.Fatalf("default sizes %v", s)
	}
	if got := DefaultCaptureSizes(64, 8192); got[len(got)-1] != 128 {
		t.Errorf("max_num_seqs 64: largest %d, want 128", got[len(got)-1])
	}
	if got := DefaultCaptureSizes(256, 100); got[len(got)-1] != 96 {
		t.Errorf("budget 100: largest %d, want 96", got[len(got)-1])
	}
	if got := DefaultCaptureSizes(1, 8192); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("max_num_seqs 1: %v, want [1 2]", got)
	}
}

// Under graphs a decode batch of 9 runs the graph captured for 16: every
// phase inside the graph (the layers' GEMMs, elementwise kernels and
// all-reduces) costs what 16 decodes cost; only attention and the logits
// GEMM, which see the real sequences, differ. Eager prices 9 as 9.
func TestGraphPadsNineToSixteen(t *testing.T) {
	eager := mustRoofline(t, "llama-3.1-70b", "h100-sxm-80gb", 4)
	graphs := mustGraphs(t, eager, DefaultCaptureSizes(1024, 8192))
	if got := graphs.PaddedTokens(9); got != 16 {
		t.Fatalf("PaddedTokens(9) = %d, want 16", got)
	}
	b9, b16 := decodes(9, 1000), decodes(16, 1000)
	g9, g16 := graphs.Breakdown(&b9), graphs.Breakdown(&b16)
	logits := func(n int) float64 { return eager.gemm(eager.lmHead, float64(n)) }
	if g9.ElementwiseNS != g16.ElementwiseNS || g9.AllReduceNS != g16.AllReduceNS ||
		!within(g9.LinearNS-logits(9), g16.LinearNS-logits(16), 1e-12) {
		t.Errorf("graph phases of 9 decodes %+v differ from 16's %+v", g9, g16)
	}
	e9, e16 := eager.Breakdown(&b9), eager.Breakdown(&b16)
	if !(e9.ElementwiseNS < e16.ElementwiseNS && e9.AllReduceNS < e16.AllReduceNS) {
		t.Errorf("eager prices 9 decodes as 16: %+v vs %+v", e9, e16)
	}
	// Padding from 8 to 9 tokens costs a jump under graphs (the step goes
	// from the graph of 8 to that of 16), a token's worth when eager.
	b8 := decodes(8, 1000)
	gJump := graphs.Breakdown(&b9).ElementwiseNS - graphs.Breakdown(&b8).ElementwiseNS
	eJump := eager.Breakdown(&b9).ElementwiseNS - eager.Breakdown(&b8).ElementwiseNS
	if !within(gJump, 8*eJump, 1e-9) {
		t.Errorf("8→9 elementwise jump under graphs %.1f ns, want 8 × eager's %.1f", gJump, eJump)
	}
}

// Eager steps cost what they cost before graphs existed: WithCUDAGraphs(nil)
// is the model itself, and a step beyond the largest capture size prices as
// eager.
func TestEagerIsUnchanged(t *testing.T) {
	eager := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	if same := mustGraphs(t, eager, nil); same != eager {
		t.Error("WithCUDAGraphs(nil) is not the eager model")
	}
	graphs := mustGraphs(t, eager, []int{1, 2, 4, 8})
	var big Batch
	big.AddPrefill(0, 512)
	big.AddDecode(100)
	if g, e := graphs.StepNS(&big), eager.StepNS(&big); g != e {
		t.Errorf("a 513-token step over sizes up to 8: %d ns under graphs, %d eager", g, e)
	}
	if got := graphs.PaddedTokens(513); got != 513 {
		t.Errorf("PaddedTokens beyond the largest size = %d", got)
	}
}

// The floors a graph removes: at batch 1 a decode step saves
// (KernelOverheadUS − GraphKernelOverheadUS) on each of the layers' GEMMs,
// elementwise kernels and attention calls; a mixed (piecewise) step keeps
// attention's floor.
func TestGraphFloors(t *testing.T) {
	eager := mustRoofline(t, "llama-2-7b", "a100-80gb", 1)
	graphs := mustGraphs(t, eager, DefaultCaptureSizes(256, 2048))
	m, _, _, cfg := eager.Spec()
	save := (cfg.KernelOverheadUS - cfg.GraphKernelOverheadUS) * 1e3
	layers := float64(m.Layers)
	b := decodes(1, 512)
	want := layers * (4 + elementwiseKernels + 1) * save
	if got := float64(eager.StepNS(&b) - graphs.StepNS(&b)); !within(got, want, 1e-6) {
		t.Errorf("batch-1 decode: graphs save %.0f ns, want %.0f", got, want)
	}
	var mixed Batch
	mixed.AddPrefill(0, 63) // 64 tokens, a captured size: no padding
	mixed.AddDecode(512)
	want = layers * (4 + elementwiseKernels) * save
	if got := float64(eager.StepNS(&mixed) - graphs.StepNS(&mixed)); !within(got, want, 1e-6) {
		t.Errorf("64-token mixed step: graphs save %.0f ns, want %.0f", got, want)
	}
}

func TestCaptureSizesParseAndValidate(t *testing.T) {
	got, err := ParseCaptureSizes(" 8,1, 2,8 ")
	if err != nil || !slices.Equal(got, []int{1, 2, 8}) {
		t.Fatalf("ParseCaptureSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "70000", "-1"} {
		if _, err := ParseCaptureSizes(bad); err == nil {
			t.Errorf("ParseCaptureSizes(%q) accepted", bad)
		}
	}
	r := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	if _, err := r.WithCUDAGraphs([]int{4, 0}); err == nil {
		t.Error("a capture size of 0 accepted")
	}
}

func TestGraphStepAllocatesNothing(t *testing.T) {
	r := mustGraphs(t, mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1), DefaultCaptureSizes(1024, 8192))
	b := decodes(9, 100)
	if n := testing.AllocsPerRun(100, func() { _ = r.StepNS(&b) }); n != 0 {
		t.Errorf("StepNS allocates %v times under graphs", n)
	}
}
