package cost

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustRoofline(t testing.TB, model, gpu string, tp int) *Roofline {
	t.Helper()
	m, ok := LookupModel(model)
	if !ok {
		t.Fatalf("no model %s", model)
	}
	g, ok := LookupGPU(gpu)
	if !ok {
		t.Fatalf("no gpu %s", gpu)
	}
	r, err := NewRoofline(m, g, tp, DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func within(got, want, tol float64) bool { return math.Abs(got/want-1) <= tol }

// streamedWeightBytes is what one decode step must read: every weight but the
// embedding table, whose lookup reads only the rows it needs.
func streamedWeightBytes(m ModelSpec) float64 {
	emb := float64(m.Vocab) * float64(m.Hidden) * float64(m.DTypeBytes)
	if m.TiedEmbeddings {
		emb = 0 // the one matrix is read as lm_head
	}
	return float64(m.WeightBytes()) - emb
}

// At batch 1 every linear layer is a matrix-vector product: its time is the
// weights over the sustained bandwidth, plus one fixed cost per GEMM.
func TestDecodeBatch1IsWeightStreaming(t *testing.T) {
	tests := []struct {
		model, gpu string
		tp         int
	}{
		{"llama-3.1-8b", "h100-sxm-80gb", 1},
		{"llama-3.1-8b", "a100-80gb", 1},
		{"mistral-7b", "l40s", 1},
		{"llama-3.1-70b", "h100-sxm-80gb", 4},
		{"qwen2.5-7b", "mi300x", 1},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.gpu, func(t *testing.T) {
			r := mustRoofline(t, tt.model, tt.gpu, tt.tp)
			m, g, tp, cfg := r.Spec()
			var b Batch
			b.AddDecode(1)
			p := r.Breakdown(&b)
			gemms := float64(4*m.Layers + 1)
			streaming := p.LinearNS - gemms*cfg.KernelOverheadUS*1e3
			want := streamedWeightBytes(m) / float64(tp) / (g.MemBandwidth * cfg.MemoryEfficiency) * 1e9
			if !within(streaming, want, 0.02) {
				t.Errorf("weight streaming %.3f ms, want weights/bandwidth %.3f ms", streaming/1e6, want/1e6)
			}
			// Never faster than the datasheet allows; overheads at most double
			// it, all-reduces aside.
			peakBound := float64(m.WeightBytes()) / float64(tp) / g.MemBandwidth * 1e9
			if step := float64(r.StepNS(&b)); step < peakBound || step > 2*peakBound+p.AllReduceNS {
				t.Errorf("step %.3f ms, want between weights/peak bandwidth %.3f ms and twice that plus all-reduce %.3f ms",
					step/1e6, peakBound/1e6, p.AllReduceNS/1e6)
			}
		})
	}
}

func TestTensorParallelHalvesWeightTime(t *testing.T) {
	for _, model := range []string{"llama-3.1-8b", "llama-3.1-70b", "yi-34b"} {
		r1 := mustRoofline(t, model, "a100-80gb", 1)
		r2 := mustRoofline(t, model, "a100-80gb", 2)
		_, _, _, cfg := r1.Spec()
		fixed := 4 * cfg.KernelOverheadUS * 1e3
		one, two := r1.LayerLinearNS(1)-fixed, r2.LayerLinearNS(1)-fixed
		if !within(two, one/2, 0.01) {
			t.Errorf("%s: layer weight time %.1f µs at tp=2, want half of %.1f µs", model, two/1e3, one/1e3)
		}
		var b Batch
		b.AddDecode(500)
		if p := r2.Breakdown(&b); !(p.AllReduceNS > 0) {
			t.Errorf("%s: tp=2 step has no all-reduce time", model)
		}
		if p := r1.Breakdown(&b); p.AllReduceNS != 0 {
			t.Errorf("%s: tp=1 step has all-reduce time %.0f ns", model, p.AllReduceNS)
		}
	}
}

// An 8192-token prefill does 2·params FLOPs per token, far above the ridge
// point: every GEMM is compute-bound and the linear phase is FLOPs over
// sustained compute.
func TestLongPrefillIsComputeBound(t *testing.T) {
	r := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	m, g, _, cfg := r.Spec()
	const tokens = 8192
	for name, s := range map[string]gemmShape{"qkv": r.qkv, "o": r.o, "gate_up": r.gateUp, "down": r.down} {
		compute, memory := tokens*s.flopNSPerRow, s.weightNS+tokens*s.rowNS
		if compute < 3*memory {
			t.Errorf("%s: compute %.0f µs not well above memory %.0f µs", name, compute/1e3, memory/1e3)
		}
	}
	var b Batch
	b.AddPrefill(0, tokens)
	p := r.Breakdown(&b)
	h, d, i := float64(m.Hidden), float64(m.HeadDim), float64(m.Intermediate)
	layerParams := h*float64(m.Heads+2*m.KVHeads)*d + float64(m.Heads)*d*h + 3*h*i
	flops := 2 * tokens * float64(m.Layers) * layerParams
	want := flops / (g.PeakFLOPS * cfg.ComputeEfficiency) * 1e9
	if !within(p.LinearNS, want, 0.05) {
		t.Errorf("linear phase %.2f ms, want FLOPs/compute %.2f ms", p.LinearNS/1e6, want/1e6)
	}
	if p.LinearNS < 0.75*p.TotalNS() {
		t.Errorf("linear phase %.1f%% of the step, want the bulk", 100*p.LinearNS/p.TotalNS())
	}
}

func TestStepNSEmptyAndMinimum(t *testing.T) {
	r := mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1)
	var b Batch
	if got := r.StepNS(&b); got != 0 {
		t.Errorf("empty batch: %d ns, want 0", got)
	}
	b.AddDecode(1)
	if got := r.StepNS(&b); got < 1 {
		t.Errorf("one decode: %d ns, want ≥ 1", got)
	}
	if got, want := r.StepNS(&b), int64(math.Round(r.Breakdown(&b).TotalNS())); got != want {
		t.Errorf("StepNS %d, Breakdown total %d", got, want)
	}
}

// Property: more work never makes a step faster, and a step is never faster
// than its decode-only part.
func TestStepNSMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range []*Roofline{
		mustRoofline(t, "llama-3.1-8b", "h100-sxm-80gb", 1),
		mustRoofline(t, "llama-3.3-70b", "a100-40gb", 8),
		mustRoofline(t, "qwen2.5-7b", "l40s", 4),
	} {
		for range 2000 {
			var b Batch
			for range rng.IntN(4) {
				b.AddPrefill(rng.IntN(8000), 1+rng.IntN(2048))
			}
			for range rng.IntN(64) {
				b.AddDecode(1 + rng.IntN(8000))
			}
			before := r.StepNS(&b)
			d := b.DecodeOnly()
			if dec := r.StepNS(&d); dec > before {
				t.Fatalf("%s: decode-only part %d ns exceeds the step %d ns for %+v", r.Name(), dec, before, b)
			}
			more := b
			if rng.IntN(2) == 0 {
				more.AddDecode(1 + rng.IntN(8000))
			} else {
				more.AddPrefill(rng.IntN(8000), 1+rng.IntN(512))
			}
			if after := r.StepNS(&more); after < before {
				t.Fatalf("%s: adding work made the step faster: %d → %d ns (%+v → %+v)", r.Name(), before, after, b, more)
			}
		}
	}
}

// vLLM 0.8.3 serving Llama-3.3-70B on 8×A100-40GB at 1 req/s measured a
// median ITL of 24.3 ms; a decode step of a few sequences must land near it.
func TestLlama70BTP8DecodeStep(t *testing.T) {
	r := mustRoofline(t, "llama-3.3-70b", "a100-40gb", 8)
	var b Batch
	for range 4 {
		b.AddDecode(1000)
	}
	ms := float64(r.StepNS(&b)) / 1e6
	if ms < 17 || ms > 31 {
		t.Errorf("4 decodes at context 1000: %.2f ms, want in [17, 31]", ms)
	}
	t.Logf("%s, 4 decodes @ctx 1000: %.2f ms (measured median ITL 24.31 ms)", r.Name(), ms)
}

func TestNewRooflineErrors(t *testing.T) {
	llama, _ := LookupModel("llama-3.1-8b")
	qwen, _ := LookupModel("qwen2.5-7b")
	a100, _ := LookupGPU("a100-80gb")
	fp8 := llama
	fp8.DTypeBytes = 1
	bad := DefaultRoofline()
	bad.ComputeEfficiency = 1.5
	tests := []struct {
		name string
		m    ModelSpec
		tp   int
		cfg  RooflineConfig
		want string
	}{
		{"tp zero", llama, 0, DefaultRoofline(), "tensor_parallel: must be in [1,1024], got 0"},
		{"heads not divisible", llama, 3, DefaultRoofline(), "does not divide llama-3.1-8b's 32 attention heads"},
		{"qwen heads at tp8", qwen, 8, DefaultRoofline(), "28 attention heads"},
		{"fp8 on A100", fp8, 1, DefaultRoofline(), "no 1-byte tensor throughput"},
		{"bad config", llama, 1, bad, "roofline.compute_efficiency: must be in (0,1], got 1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRoofline(tt.m, a100, tt.tp, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// KV heads are replicated when tp is a multiple of their count.
	if _, err := NewRoofline(llama, a100, 16, DefaultRoofline()); err != nil {
		t.Errorf("tp=16 over 8 KV heads (replicated): %v", err)
	}
}

func TestRooflineConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *RooflineConfig)
		want string
	}{
		{"defaults", func(c *RooflineConfig) {}, ""},
		{"compute", func(c *RooflineConfig) { c.ComputeEfficiency = 0 }, "roofline.compute_efficiency: must be in (0,1], got 0"},
		{"memory", func(c *RooflineConfig) { c.MemoryEfficiency = math.NaN() }, "roofline.memory_efficiency"},
		{"all-reduce eff", func(c *RooflineConfig) { c.AllReduceEfficiency = 2 }, "roofline.all_reduce_efficiency: must be in (0,1], got 2"},
		{"kernel", func(c *RooflineConfig) { c.KernelOverheadUS = -1 }, "roofline.kernel_overhead_us"},
		{"attention", func(c *RooflineConfig) { c.AttentionOverheadUS = math.Inf(1) }, "roofline.attention_overhead_us"},
		{"latency", func(c *RooflineConfig) { c.AllReduceLatencyUS = -3 }, "roofline.all_reduce_latency_us"},
		{"overhead", func(c *RooflineConfig) { c.OverheadUS = 2e6 }, "roofline.overhead_us"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultRoofline()
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestKernelsShapes(t *testing.T) {
	h100, _ := LookupGPU("h100-sxm-80gb")
	k, err := NewKernels(h100, 2, DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	// Doubling a long prefill's length quadruples its attention work.
	if r := k.PrefillAttentionNS(32768, 32, 8, 128) / k.PrefillAttentionNS(16384, 32, 8, 128); !within(r, 4, 0.02) {
		t.Errorf("prefill 32k/16k = %.2f, want ≈4", r)
	}
	// Decode attention is KV reads: doubling the context doubles it.
	big := k.DecodeAttentionNS(64, 65536, 32, 8, 128)
	if r := (k.DecodeAttentionNS(64, 131072, 32, 8, 128) - k.attnNS) / (big - k.attnNS); !within(r, 2, 0.01) {
		t.Errorf("decode 128k/64k = %.2f, want ≈2", r)
	}
	// A compute-bound GEMM is priced in whole 128-row tiles: flat inside a
	// tile, a full tile's step at the boundary.
	// (The smooth roof rounds the corner a little, so the step is somewhat
	// less than a full tile's compute.)
	row := k.shape(8192, 8192).flopNSPerRow
	at, past, next := k.GEMMNS(8192, 8192, 8192), k.GEMMNS(8193, 8192, 8192), k.GEMMNS(8194, 8192, 8192)
	if past != next {
		t.Errorf("GEMM m=8193 %.0f ns, m=8194 %.0f ns: want equal inside a tile", past, next)
	}
	if past-at < 64*row {
		t.Errorf("GEMM m=8192 → 8193 grows %.0f ns, want most of a 128-row tile (%.0f ns)", past-at, 128*row)
	}
	if k.GEMMNS(0, 4096, 4096) != 0 || k.DecodeAttentionNS(0, 10, 8, 8, 128) != 0 || k.PrefillAttentionNS(0, 8, 8, 128) != 0 {
		t.Error("empty operators should cost nothing")
	}
}

func TestStepNSDoesNotAllocate(t *testing.T) {
	r := mustRoofline(t, "llama-3.3-70b", "a100-40gb", 8)
	l, err := NewLinear(LinearConfig{C0US: 5000, C1USPerPrefillToken: 20, C2USPerDecodeSeq: 50})
	if err != nil {
		t.Fatal(err)
	}
	var b, scratch Batch
	for _, m := range []Model{r, l} {
		allocs := testing.AllocsPerRun(100, func() {
			b.Reset()
			b.AddPrefill(100, 412)
			b.AddDecode(900)
			b.AddDecode(1200)
			_ = m.StepNS(&b)
			scratch = b.DecodeOnly()
			_ = m.StepNS(&scratch)
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per step, want 0", m.Name(), allocs)
		}
	}
}

func BenchmarkRooflineStepNS(b *testing.B) {
	r := mustRoofline(b, "llama-3.1-70b", "h100-sxm-80gb", 4)
	var batch Batch
	batch.AddPrefill(1024, 512)
	for i := range 32 {
		batch.AddDecode(500 + 50*i)
	}
	var sink int64
	for b.Loop() {
		sink += r.StepNS(&batch)
	}
	_ = sink
}
