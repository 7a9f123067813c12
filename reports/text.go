package reports

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print to a terminal: control characters
// (C0, DEL, C1: ESC sequences that move the cursor, clear the screen or set
// the window title; newlines and tabs that break a table's rows) and
// bidirectional overrides, which reorder what is shown, are written as Go
// escapes (\x1b, \n, \u202e), as is invalid UTF-8. Names read from files
// pass through it before they reach stdout.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if unprintable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case unprintable(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
	}
	return b.String()
}

func unprintable(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// MarkdownCell returns s printable (Printable) and with '|' escaped, so a
// name keeps a markdown table's columns.
func MarkdownCell(s string) string {
	return strings.ReplaceAll(Printable(s), "|", `\|`)
}
