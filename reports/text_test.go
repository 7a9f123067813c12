package reports

import "testing"

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want, md string }{
		{"chunked", "chunked", "chunked"},
		{"a|b", "a|b", `a\|b`},
		{"x\x1b[2Jy", `x\x1b[2Jy`, `x\x1b[2Jy`},
		{"p\nq\tr", `p\nq\tr`, `p\nq\tr`},
		{"bell\x07", `bell\a`, `bell\a`},
		{"c1\u009b", `c1\u009b`, `c1\u009b`},
		{"rtl\u202eevil", `rtl\u202eevil`, `rtl\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"θ ≤ 400 ms, 中文", "θ ≤ 400 ms, 中文", "θ ≤ 400 ms, 中文"},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := MarkdownCell(c.in); got != c.md {
			t.Errorf("MarkdownCell(%q) = %q, want %q", c.in, got, c.md)
		}
	}
}
