package cost

import (
	"math"
	"strings"
	"testing"
)

func TestLinearStepNS(t *testing.T) {
	l, err := NewLinear(LinearConfig{
		C0US: 4000, C1USPerPrefillToken: 20, C2USPerDecodeSeq: 50,
		C3USPerDecodeContextToken: 0.01, C4USPerPrefillTokenContext: 1e-5,
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fill func(b *Batch)
		want int64
	}{
		{"empty", func(b *Batch) {}, 0},
		// 4000 + 50 + 0.01·1000 = 4060 µs.
		{"one decode", func(b *Batch) { b.AddDecode(1000) }, 4_060_000},
		// 4000 + 20·100 + 1e-5·100·100 = 6000.1 µs.
		{"one prefill", func(b *Batch) { b.AddPrefill(0, 100) }, 6_000_100},
		// 4000 + 20·10 + 1e-5·10·510 + 2·50 + 0.01·600 = 4306.051 µs.
		{"hybrid", func(b *Batch) { b.AddPrefill(500, 10); b.AddDecode(200); b.AddDecode(400) }, 4_306_051},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Batch
			tt.fill(&b)
			if got := l.StepNS(&b); got != tt.want {
				t.Errorf("StepNS = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLinearValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  LinearConfig
		want string
	}{
		{"c0 only", LinearConfig{C0US: 1}, ""},
		{"c3 only", LinearConfig{C3USPerDecodeContextToken: 0.1}, ""},
		{"all zero", LinearConfig{}, "all coefficients are 0"},
		{"negative", LinearConfig{C0US: 1, C2USPerDecodeSeq: -1}, "linear.c2_us: must be in [0,1e+06] µs, got -1"},
		{"nan", LinearConfig{C4USPerPrefillTokenContext: math.NaN()}, "linear.c4_us"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLinear(tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestLinearSaturates(t *testing.T) {
	l, err := NewLinear(LinearConfig{C4USPerPrefillTokenContext: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{PrefillSeqs: 1, PrefillTokens: 1, PrefillTokCtx: math.MaxInt64}
	if got := l.StepNS(&b); got != maxStepNS {
		t.Errorf("absurd batch: %d ns, want the cap %d", got, int64(maxStepNS))
	}
}

func BenchmarkLinearStepNS(b *testing.B) {
	l, err := NewLinear(LinearConfig{C0US: 4000, C1USPerPrefillToken: 20, C2USPerDecodeSeq: 50})
	if err != nil {
		b.Fatal(err)
	}
	var batch Batch
	batch.AddPrefill(0, 512)
	batch.AddDecode(1000)
	var sink int64
	for b.Loop() {
		sink += l.StepNS(&batch)
	}
	_ = sink
}
