package workloads

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Window is a time window [Start, End) in seconds on a source's own
// timeline (before any time scaling). The zero Window means "no window".
// End may be +Inf ("to the end of the source").
//
// In a scenario it is written as a two-number list, window_s: [600, 1200],
// or as text, "600,1200" (the form --set and --vary take); "600," and
// "600,inf" mean from 600 s to the end.
type Window struct {
	Start, End float64
}

// IsZero reports whether w is unset. YAML omitempty honours it.
func (w Window) IsZero() bool { return w == Window{} }

// String returns the text form "START,END" ("" for the zero Window).
func (w Window) String() string {
	if w.IsZero() {
		return ""
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return num(w.Start) + "," + num(w.End)
}

// Validate checks 0 ≤ Start < End, both numbers (End may be +Inf).
func (w Window) Validate() error {
	if w.IsZero() {
		return nil
	}
	if !(w.Start >= 0) || math.IsInf(w.Start, 1) || !(w.End > w.Start) {
		return fmt.Errorf("expected 0 ≤ START < END seconds, got [%g, %g]", w.Start, w.End)
	}
	return nil
}

// ParseWindow parses "START,END" (END empty or "inf" for no end).
func ParseWindow(s string) (Window, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Window{}, nil
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return Window{}, fmt.Errorf("expected START,END in seconds such as \"600,1200\", got %q", s)
	}
	start, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
	if err != nil {
		return Window{}, fmt.Errorf("window start: expected a number of seconds, got %q", a)
	}
	end := math.Inf(1)
	if b = strings.TrimSpace(b); b != "" {
		if end, err = strconv.ParseFloat(b, 64); err != nil {
			return Window{}, fmt.Errorf("window end: expected a number of seconds, got %q", b)
		}
	}
	w := Window{Start: start + 0, End: end + 0}
	if err := w.Validate(); err != nil {
		return Window{}, err
	}
	return w, nil
}

// MarshalText returns the text form, so a Window is a YAML scalar and a
// JSON string.
func (w Window) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText parses the text form with ParseWindow.
func (w *Window) UnmarshalText(text []byte) error {
	parsed, err := ParseWindow(string(text))
	if err != nil {
		return err
	}
	*w = parsed
	return nil
}

// UnmarshalYAML accepts a two-number list as well as the text form.
func (w *Window) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) != 2 {
			return fmt.Errorf("line %d: expected [START, END] in seconds, got %d values", n.Line, len(n.Content))
		}
		var parts [2]string
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: expected a number of seconds", c.Line)
			}
			parts[i] = c.Value
		}
		if v := strings.ToLower(strings.TrimPrefix(parts[1], "+")); v == ".inf" {
			parts[1] = "inf"
		}
		return w.UnmarshalText([]byte(parts[0] + "," + parts[1]))
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected [START, END] in seconds", n.Line)
	}
	if n.ShortTag() == "!!null" {
		*w = Window{}
		return nil
	}
	return w.UnmarshalText([]byte(n.Value))
}
