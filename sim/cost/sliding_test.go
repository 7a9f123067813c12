package cost

import (
	"strings"
	"testing"
)

// gpt-oss alternates 128-token sliding-window and full-attention layers:
// only the 12 full layers of gpt-oss-20b grow with the context, so its KV
// per token is half what 24 full layers hold; each sequence holds at most
// ⌈128/16⌉ + 1 = 9 blocks in the window layers.
func TestSlidingWindowKV(t *testing.T) {
	m, _ := LookupModel("gpt-oss-20b")
	full := m
	full.SlidingLayers, full.SlidingWindow = 0, 0
	if got, want := m.KVBytesPerToken(), full.KVBytesPerToken()/2; got != want || got != 2*12*8*64*2 {
		t.Errorf("KV bytes per token %d, want %d (half of all-full %d)", got, want, full.KVBytesPerToken())
	}
	if got, want := m.SlidingKVBytesPerSeqPerGPU(1, 16), int64(12*2*8*64*2*9*16); got != want {
		t.Errorf("window KV per sequence %d, want %d", got, want)
	}
	if got := m.SlidingKVBytesPerSeqPerGPU(8, 16); got != int64(12*2*1*64*2*9*16) {
		t.Errorf("window KV per sequence at tp 8: %d", got)
	}
	if full.SlidingKVBytesPerSeqPerGPU(1, 16) != 0 {
		t.Error("a model without window layers holds window KV")
	}
}

// Attention time and work follow the layer types: at 16k tokens of
// context a decode's window layers read 128 tokens, so attention over
// the context costs about half of 24 full layers'; at 100 tokens (inside
// the window) the two are the same.
func TestSlidingWindowAttention(t *testing.T) {
	m, _ := LookupModel("gpt-oss-20b")
	full := m
	full.SlidingLayers, full.SlidingWindow = 0, 0
	g, _ := LookupGPU("h100-sxm-80gb")
	rs, _ := NewRoofline(m, g, 1, DefaultRoofline())
	rf, _ := NewRoofline(full, g, 1, DefaultRoofline())
	attn := func(r *Roofline, b *Batch) float64 { return r.Breakdown(b).AttentionNS - r.attnFixedNS }
	long := &Batch{DecodeSeqs: 64, DecodeContext: 64 * 16384}
	if r := attn(rs, long) / attn(rf, long); r < 0.49 || r > 0.52 {
		t.Errorf("16k decode attention, sliding/full = %.3f, want about (12·16384 + 12·128)/(24·16384) = 0.504", r)
	}
	short := &Batch{DecodeSeqs: 64, DecodeContext: 64 * 100}
	if a, b := attn(rs, short), attn(rf, short); a != b {
		t.Errorf("contexts inside the window: %.0f ns against %.0f", a, b)
	}
	pre := &Batch{PrefillSeqs: 1, PrefillTokens: 8192, PrefillAttn: 8192 * 8193 / 2, PrefillContext: 8192}
	if r := rs.StepWork(pre).FLOPs / rf.StepWork(pre).FLOPs; r >= 1 || r < 0.5 {
		t.Errorf("8k prefill work sliding/full = %.3f, want below 1", r)
	}
	if n := testing.AllocsPerRun(100, func() { rs.StepNS(long); rs.StepWork(pre) }); n != 0 {
		t.Errorf("%v allocations per step", n)
	}
}

func TestParseLayerTypes(t *testing.T) {
	base := `{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
		"vocab_size": 100, "max_position_embeddings": 256, `
	for _, tt := range []struct{ extra, want string }{
		{`"layer_types": ["sliding_attention", "full_attention"], "sliding_window": 64}`, ""},
		{`"layer_types": ["sliding_attention"], "sliding_window": 64}`, "layer_types: must be a list of num_hidden_layers = 2 entries"},
		{`"layer_types": ["sliding_attention", "chunked"], "sliding_window": 64}`, "layer_types: entry 1 is chunked"},
		{`"layer_types": ["sliding_attention", "sliding_attention"], "sliding_window": 64}`, "layer_types: has no full_attention layer"},
		{`"layer_types": ["sliding_attention", "full_attention"]}`, "sliding_window"},
		{`"sliding_window": 64, "use_sliding_window": false}`, ""},
	} {
		m, err := ParseHFConfig("c.json", []byte(base+tt.extra))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.extra, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.extra, err, tt.want)
		case tt.want == "" && strings.Contains(tt.extra, "layer_types") && (m.SlidingLayers != 1 || m.SlidingWindow != 64):
			t.Errorf("%s: %d sliding layers, window %d", tt.extra, m.SlidingLayers, m.SlidingWindow)
		case tt.want == "" && !strings.Contains(tt.extra, "layer_types") && m.SlidingLayers != 0:
			t.Errorf("%s: a sliding_window without layer_types made %d sliding layers", tt.extra, m.SlidingLayers)
		}
	}
}

// Llama 4: 36 of 48 layers chunked over 8192 tokens (no_rope_layers, or
// every 4th layer NoPE when it is empty), KV sized as full attention on
// every layer, as vLLM's "GPU KV cache size" counts it: 48·2·8·128·2 bytes
// a token. Their attention is bounded by the chunk, so at 32k of context a
// decode step's attention costs less than all-full, and at 4k the same.
func TestLlama4ChunkedAttention(t *testing.T) {
	scout, _ := LookupModel("llama-4-scout")
	if scout.ChunkedLayers != 36 || scout.AttentionChunk != 8192 {
		t.Fatalf("chunked %d layers of %d tokens, want 36 of 8192", scout.ChunkedLayers, scout.AttentionChunk)
	}
	if got := scout.KVBytesPerToken(); got != 196_608 {
		t.Errorf("KV bytes per token %d, want 196,608", got)
	}
	data := []byte(`{"model_type": "llama4_text", "hidden_size": 64, "num_hidden_layers": 8, "num_attention_heads": 4,
		"intermediate_size": 64, "vocab_size": 64, "max_position_embeddings": 65536, "attention_chunk_size": 1024,
		"no_rope_layers": []}`)
	m, err := ParseHFConfig("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if m.ChunkedLayers != 6 || m.AttentionChunk != 1024 {
		t.Errorf("empty no_rope_layers: %d chunked layers of %d, want 6 of 1024", m.ChunkedLayers, m.AttentionChunk)
	}
	for _, bad := range []string{`[1,1]`, `[1,1,1,1,1,1,1,1]`, `[1,2,1,0,1,1,1,0]`} {
		d := []byte(strings.Replace(string(data), `"no_rope_layers": []`, `"no_rope_layers": `+bad, 1))
		if _, err := ParseHFConfig("c.json", d); err == nil || !strings.Contains(err.Error(), "no_rope_layers") {
			t.Errorf("no_rope_layers %s: error %v, want one naming no_rope_layers", bad, err)
		}
	}
	h100, _ := LookupGPU("h100-sxm-80gb")
	full := scout
	full.ChunkedLayers, full.AttentionChunk = 0, 0
	rc, _ := NewRoofline(scout, h100, 4, DefaultRoofline())
	rf, _ := NewRoofline(full, h100, 4, DefaultRoofline())
	attn := func(r *Roofline, b *Batch) float64 { return r.Breakdown(b).AttentionNS - r.attnFixedNS }
	short := &Batch{DecodeSeqs: 32, DecodeContext: 32 * 4096}
	if c, f := attn(rc, short), attn(rf, short); c != f {
		t.Errorf("at 4k of context chunked attention %.0f ns, all-full %.0f ns: want equal", c, f)
	}
	long := &Batch{DecodeSeqs: 32, DecodeContext: 32 * 32768}
	if r := attn(rc, long) / attn(rf, long); r < 0.43 || r > 0.46 {
		t.Errorf("32k decode attention, chunked/full = %.3f, want about (12·32768 + 36·8192)/(48·32768) = 0.4375", r)
	}
}
