package sim

import "testing"

func TestParsePercentiles(t *testing.T) {
	got, err := ParsePercentiles(" 99, p50,95,99.9 ,50")
	if err != nil || got.String() != "50,95,99,99.9" {
		t.Errorf("ParsePercentiles = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "100", "x", ",", "-5"} {
		if _, err := ParsePercentiles(bad); err == nil {
			t.Errorf("ParsePercentiles(%q) accepted", bad)
		}
	}
}

func FuzzParsePercentiles(f *testing.F) {
	for _, s := range []string{"50,90,95,99", "p99.9", "", "1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParsePercentiles(s)
		if err != nil {
			return
		}
		for i, p := range ps {
			if !(p > 0 && p < 100) || (i > 0 && p <= ps[i-1]) {
				t.Fatalf("ParsePercentiles(%q) = %v", s, ps)
			}
		}
	})
}
