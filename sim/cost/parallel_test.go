package cost

import (
	"math"
	"strings"
	"testing"
)

func mustParallel(t *testing.T, m ModelSpec, g GPUSpec, p Parallelism) *Roofline {
	t.Helper()
	r, err := NewRooflineParallel(m, g, p, DefaultRoofline())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A group of one rank without expert parallelism is plain tensor
// parallelism: the same step times and work, bit for bit.
func TestParallelismNoneIsTensorParallel(t *testing.T) {
	g, _ := LookupGPU("h200-141gb")
	for _, name := range []string{"qwen3-30b-a3b", "deepseek-v3", "llama-3.1-8b"} {
		m, _ := LookupModel(name)
		tp := 8
		if name == "llama-3.1-8b" {
			tp = 1
		}
		a, _ := NewRoofline(m, g, tp, DefaultRoofline())
		b := mustParallel(t, m, g, Parallelism{TP: tp, DP: 1})
		batch := &Batch{PrefillSeqs: 1, PrefillTokens: 512, PrefillAttn: 512 * 513 / 2, PrefillContext: 512, DecodeSeqs: 40, DecodeContext: 40 * 3000}
		if a.StepNS(batch) != b.StepNS(batch) || a.StepWork(batch) != b.StepWork(batch) || a.Breakdown(batch).AllToAllNS != 0 {
			t.Errorf("%s: dp 1 differs from tp alone", name)
		}
	}
}

// The busiest GPU's rows under uniform routing: μ + σ·√(2 ln G). DeepSeek-V3
// (top-8) at 256 tokens over 8 GPUs: μ = 256, σ = √(256·7/8) = 14.97,
// √(2 ln 8) = 2.039, so 286.5 rows.
func TestBusiestRows(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	g, _ := LookupGPU("h200-141gb")
	r := mustParallel(t, m, g, Parallelism{TP: 1, DP: 8, ExpertParallel: true})
	want := 256 + math.Sqrt(2*math.Log(8))*math.Sqrt(256*7.0/8)
	if got := r.BusiestRows(256); math.Abs(got-want) > 1e-9 || math.Abs(got-286.5) > 0.1 {
		t.Errorf("BusiestRows(256) = %.3f, want %.3f", got, want)
	}
	if got := r.BusiestRows(1); got > 8 { // never more rows than the tokens' k
		t.Errorf("BusiestRows(1) = %g, want ≤ 8", got)
	}
	noEP := mustParallel(t, m, g, Parallelism{TP: 1, DP: 8})
	if got := noEP.BusiestRows(256); got != 256*8 {
		t.Errorf("without ep every GPU runs every row: %g, want %d", got, 256*8)
	}
}

// DeepSeek-V3 on 8× H200 with DP 8 and expert parallelism: the
// all-to-all is priced per MoE layer as dispatch and combine of the
// busiest GPU's rows over NVLink plus twice the GPU's all-to-all latency.
func TestDeepSeekDP8EPAllToAll(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	g, _ := LookupGPU("h200-141gb")
	r := mustParallel(t, m, g, Parallelism{TP: 1, DP: 8, ExpertParallel: true})
	b := &Batch{DecodeSeqs: 256, DecodeContext: 256 * 2048}
	p := r.Breakdown(b)
	rows := r.BusiestRows(256)
	perRow := 2 * float64(m.Hidden) * 2 * (7.0 / 8) / (g.InterconnectBW * 0.8 / 1e9)
	want := 58 * (2*25e3 + rows*perRow)
	if math.Abs(p.AllToAllNS-want) > 1e-6*want {
		t.Errorf("all-to-all %.0f ns, want %.0f", p.AllToAllNS, want)
	}
	if p.AllReduceNS != 0 || p.TotalNS() <= p.AllToAllNS {
		t.Errorf("breakdown %+v", p)
	}
	t.Logf("dp8+ep, 256 decodes at 2k: %+v, total %.2f ms", p, p.TotalNS()/1e6)
	// Across two nodes (dp 16) part of every row crosses the scale-out
	// network, so the all-to-all per token grows.
	r16 := mustParallel(t, m, g, Parallelism{TP: 1, DP: 16, ExpertParallel: true})
	b16 := &Batch{DecodeSeqs: 512, DecodeContext: 512 * 2048}
	if a16 := r16.Breakdown(b16).AllToAllNS; a16 <= p.AllToAllNS {
		t.Errorf("dp16 all-to-all %.0f ns not above dp8's %.0f (same tokens per rank)", a16, p.AllToAllNS)
	}
}

// Lockstep: a step is the busiest rank's. One decoding sequence over 8
// ranks costs the attention of one sequence (the other ranks run dummy
// passes), and 8 sequences cost about the same per rank.
func TestDataParallelBusiestRank(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	g, _ := LookupGPU("h200-141gb")
	r := mustParallel(t, m, g, Parallelism{TP: 1, DP: 8, ExpertParallel: true})
	one := r.Breakdown(&Batch{DecodeSeqs: 1, DecodeContext: 4096})
	eight := r.Breakdown(&Batch{DecodeSeqs: 8, DecodeContext: 8 * 4096})
	nine := r.Breakdown(&Batch{DecodeSeqs: 9, DecodeContext: 9 * 4096})
	if one.AttentionNS != eight.AttentionNS {
		t.Errorf("attention: 1 sequence %.0f ns, 8 over 8 ranks %.0f; want equal", one.AttentionNS, eight.AttentionNS)
	}
	if nine.AttentionNS <= eight.AttentionNS {
		t.Errorf("9 sequences put 2 on one rank: attention %.0f not above %.0f", nine.AttentionNS, eight.AttentionNS)
	}
}

// Memory: with DP every rank holds the non-expert weights split over its
// TP GPUs and its own KV cache; the experts split over all GPUs.
func TestParallelWeightsAndKV(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	g, _ := LookupGPU("h200-141gb")
	experts := m.RoutedExpertBytes()
	p := Parallelism{TP: 1, DP: 8, ExpertParallel: true}
	if got, want := WeightBytesPerGPUParallel(m, p), m.WeightBytes()-experts+experts/8; got != want {
		t.Errorf("weights per GPU %d, want %d", got, want)
	}
	reserve := DefaultActivationReserve(m, 8192, 1024, 1)
	rank, err := KVBlocksParallel(m, g, p, 16, 0.9, reserve)
	if err != nil {
		t.Fatal(err)
	}
	tp8, _ := KVBlocks(m, g, 8, 16, 0.9, DefaultActivationReserve(m, 8192, 1024, 8))
	t.Logf("KV blocks: one dp rank %d (8 ranks %d), tp8 %d", rank, 8*rank, tp8)
	if rank < tp8/2 || 8*rank < 4*tp8 {
		t.Errorf("dp8 rank %d blocks against tp8 %d: MLA's latent is replicated over TP, so DP should hold several times more", rank, tp8)
	}
}

func TestParallelismErrors(t *testing.T) {
	g, _ := LookupGPU("h100-sxm-80gb")
	dense, _ := LookupModel("llama-3.1-8b")
	moe, _ := LookupModel("qwen3-30b-a3b")
	for _, tt := range []struct {
		m    ModelSpec
		p    Parallelism
		want string
	}{
		{dense, Parallelism{TP: 1, DP: 2}, "dp: llama-3.1-8b is a dense model"},
		{dense, Parallelism{TP: 1, ExpertParallel: true}, "enable_expert_parallel: llama-3.1-8b has no experts"},
		{moe, Parallelism{TP: 1, DP: 3, ExpertParallel: true}, "do not split qwen3-30b-a3b's 128 experts"},
		{moe, Parallelism{TP: 1, DP: 5}, "does not divide qwen3-30b-a3b's expert intermediate size 768"},
		{moe, Parallelism{TP: 1, DP: -1}, "dp: must be in [1,1024]"},
	} {
		_, err := NewRooflineParallel(tt.m, g, tt.p, DefaultRoofline())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.p, err, tt.want)
		}
	}
}

// The parallel path allocates nothing per step.
func TestParallelStepAllocates(t *testing.T) {
	m, _ := LookupModel("deepseek-v3")
	g, _ := LookupGPU("h200-141gb")
	r := mustParallel(t, m, g, Parallelism{TP: 1, DP: 8, ExpertParallel: true})
	b := &Batch{DecodeSeqs: 100, DecodeContext: 100 * 1000, PrefillSeqs: 2, PrefillTokens: 1000, PrefillAttn: 500000, PrefillContext: 1000}
	if n := testing.AllocsPerRun(100, func() { r.StepNS(b); r.StepWork(b) }); n != 0 {
		t.Errorf("%v allocations per step", n)
	}
}
