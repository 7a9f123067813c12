package scenario

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// PrintConfigs writes each variant's resolved configuration as a YAML
// document: a complete scenario file to start from.
func PrintConfigs(w io.Writer, variants []Variant) error {
	for i, v := range variants {
		s, err := v.Config.Resolve()
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprintf(w, "# run %s: resolved by itlsim run --print-config\n", v.Name)
		if s.Config.Cost.Model == "linear" {
			fmt.Fprintln(w, "# cost.linear: coefficients not given are 0 once any is given; all five take the built-in values only when none is")
		}
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(s.Config); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	return nil
}

// PathsHelp lists the field paths one section a line ("workload:
// arrival, rate, …"), wrapped at width, for run --help.
func PathsHelp(paths []string, width int) string {
	var b strings.Builder
	var section string
	var line strings.Builder
	flush := func() {
		if line.Len() > 0 {
			b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
			line.Reset()
		}
	}
	for _, p := range paths {
		sec, name, ok := strings.Cut(p, ".")
		if !ok {
			sec, name = "top level", p
		}
		if sec != section {
			flush()
			section = sec
			line.WriteString("  " + sec + ": ")
		} else {
			line.WriteString(", ")
			if line.Len()+len(name) > width {
				b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
				line.Reset()
				line.WriteString("      ")
			}
		}
		line.WriteString(name)
	}
	flush()
	return strings.TrimRight(b.String(), "\n")
}

// OffHint tells how to turn off a field that an empty value was meant to
// clear.
func OffHint(path string) string {
	switch path {
	case "delivery.network.profile":
		return " (none: no network profile)"
	case "delivery.coalescing.preset":
		return " (none: no coalescing)"
	}
	if strings.HasPrefix(path, "delivery.") && strings.HasSuffix(path, "_ms") {
		return " (0: off)"
	}
	return ""
}

// DurationsIn lets a flag in milliseconds or seconds (unit) take durations
// with a unit, as people write them: for milliseconds "33ms", "1.5s" (and
// lists of them) become "33", "1500"; for seconds "2m" becomes "120". Plain
// numbers pass unchanged; anything else is left for the field's own check
// to reject.
func DurationsIn(v string, unit time.Duration) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if d, err := time.ParseDuration(p); err == nil && strings.ContainsAny(p, "hmsµun") {
			parts[i] = strconv.FormatFloat(float64(d)/float64(unit), 'g', -1, 64)
		}
	}
	return strings.Join(parts, ",")
}
