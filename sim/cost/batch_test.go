package cost

import "testing"

func TestBatchAdd(t *testing.T) {
	tests := []struct {
		name string
		fill func(b *Batch)
		want Batch
	}{
		{"empty", func(b *Batch) {}, Batch{}},
		{"fresh prompt of 4", func(b *Batch) { b.AddPrefill(0, 4) },
			// pairs 1+2+3+4 = 10; tokens × context 4·4.
			Batch{PrefillSeqs: 1, PrefillTokens: 4, PrefillAttn: 10, PrefillTokCtx: 16, PrefillContext: 4}},
		{"second chunk", func(b *Batch) { b.AddPrefill(100, 3) },
			// 3·100 + 3·4/2 = 306 pairs; 3·103 tokens × context.
			Batch{PrefillSeqs: 1, PrefillTokens: 3, PrefillAttn: 306, PrefillTokCtx: 309, PrefillContext: 103}},
		{"zero-token chunk adds nothing", func(b *Batch) { b.AddPrefill(5, 0) }, Batch{}},
		{"decodes", func(b *Batch) { b.AddDecode(10); b.AddDecode(20) },
			Batch{DecodeSeqs: 2, DecodeContext: 30}},
		{"hybrid", func(b *Batch) { b.AddPrefill(0, 2); b.AddDecode(7) },
			Batch{PrefillSeqs: 1, PrefillTokens: 2, PrefillAttn: 3, PrefillTokCtx: 4, PrefillContext: 2,
				DecodeSeqs: 1, DecodeContext: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Batch
			tt.fill(&b)
			if b != tt.want {
				t.Errorf("got %+v, want %+v", b, tt.want)
			}
		})
	}
}

func TestBatchTokensResetDecodeOnly(t *testing.T) {
	var b Batch
	b.AddPrefill(16, 512)
	b.AddDecode(300)
	b.AddDecode(400)
	if got := b.Tokens(); got != 514 {
		t.Errorf("Tokens() = %d, want 514", got)
	}
	if got := b.Seqs(); got != 3 {
		t.Errorf("Seqs() = %d, want 3", got)
	}
	d := b.DecodeOnly()
	if want := (Batch{DecodeSeqs: 2, DecodeContext: 700}); d != want {
		t.Errorf("DecodeOnly() = %+v, want %+v", d, want)
	}
	if b.PrefillTokens != 512 {
		t.Errorf("DecodeOnly changed its receiver: %+v", b)
	}
	b.Reset()
	if b != (Batch{}) || !b.Empty() {
		t.Errorf("after Reset got %+v", b)
	}
}
