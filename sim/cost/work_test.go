package cost

import (
	"math/rand/v2"
	"testing"
)

// One decode step of llama-3.1-8b at context 1000 on one H100, counted by
// hand: 2·k·n FLOPs per weight matrix and token, 4·heads·head_dim per
// (query, key) pair and layer; bytes are the GEMM weights plus the KV read,
// with activations a small remainder.
func TestStepWorkOneDecodeByHand(t *testing.T) {
	r := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	m, g, _, _ := r.Spec()
	h, d, L := float64(m.Hidden), float64(m.HeadDim), float64(m.Layers)
	q, kv, inter, v := float64(m.Heads), float64(m.KVHeads), float64(m.Intermediate), float64(m.Vocab)
	params := L*(h*(q+2*kv)*d+q*d*h+3*h*inter) + h*v // qkv, o, gate+up, down; lm_head
	const ctx = 1000
	wantFLOPs := 2*params + 4*q*d*ctx*L
	wantBytes := params*2 + ctx*L*2*kv*d*2

	var b Batch
	b.AddDecode(ctx)
	w := r.StepWork(&b)
	if !within(w.FLOPs, wantFLOPs, 1e-12) {
		t.Errorf("FLOPs = %.6g, want %.6g", w.FLOPs, wantFLOPs)
	}
	if w.Bytes < wantBytes || !within(w.Bytes, wantBytes, 0.01) {
		t.Errorf("bytes = %.6g, want %.6g plus under 1 %% of activations", w.Bytes, wantBytes)
	}
	p := r.Peak()
	if p.FLOPs != g.PeakFLOPS || p.Bytes != g.MemBandwidth {
		t.Errorf("peak = %+v, want the GPU's bf16 peak %g and bandwidth %g", p, g.PeakFLOPS, g.MemBandwidth)
	}
	if (r.StepWork(&Batch{}) != Work{}) {
		t.Error("an empty step does work")
	}
}

// The work of a step never exceeds what the priced step time allows at
// peak: MFU and MBU of any step are in [0, 1], dense, MoE, MLA, fp8 and tp.
func TestStepWorkWithinPeak(t *testing.T) {
	for _, c := range []struct {
		model, gpu string
		tp         int
	}{
		{"llama-3.1-8b", "h100-sxm-80gb", 1},
		{"llama-3.1-70b", "h100-sxm-80gb", 4},
		{"mixtral-8x7b", "h100-sxm-80gb", 2},
		{"deepseek-v3", "h200-141gb", 8},
	} {
		m, ok := LookupModel(c.model)
		if !ok {
			t.Fatalf("no model %s", c.model)
		}
		r := mustRoofline(t, c.model, c.gpu, c.tp)
		p := r.Peak()
		rng := rand.New(rand.NewPCG(1, 2))
		for range 500 {
			var b Batch
			for range rng.IntN(64) + 1 {
				if rng.IntN(8) == 0 {
					b.AddPrefill(rng.IntN(2000), rng.IntN(2048)+1)
				} else {
					b.AddDecode(rng.IntN(m.MaxContext/4) + 1)
				}
			}
			w := r.StepWork(&b)
			s := float64(r.StepNS(&b)) / 1e9
			mfu, mbu := w.FLOPs/(p.FLOPs*s), w.Bytes/(p.Bytes*s)
			if !(mfu > 0 && mfu <= 1 && mbu > 0 && mbu <= 1) {
				t.Fatalf("%s: batch %+v: MFU %g, MBU %g outside (0, 1]", c.model, b, mfu, mbu)
			}
		}
	}
}

func TestStepWorkDoesNotAllocate(t *testing.T) {
	r := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	var b Batch
	b.AddDecode(100)
	var c Counter = r
	if n := testing.AllocsPerRun(100, func() { _ = c.StepWork(&b) }); n != 0 {
		t.Errorf("StepWork allocates %g times", n)
	}
}
