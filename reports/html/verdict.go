package html

import (
	"slices"
	"strings"
)

// verdictView is a gate's verdict at the top of its page: the headline
// (PASS or FAIL, candidate against baseline), the table the terminal
// prints, and the lines under it (how a metric fails, what regressed).
type verdictView struct {
	Headline string
	Pass     bool
	Table    table
	Notes    []string
}

// verdictOf reads a gate report in its markdown form (what gate.Write
// prints for a pull request): the page shows exactly what the terminal
// says. A malformed report gives nil, and the page shows no verdict.
func verdictOf(md []byte) *verdictView {
	if len(md) == 0 {
		return nil
	}
	v := &verdictView{Table: table{ID: "gate-verdict", Caption: "Gate verdict, metric by metric"}}
	for _, line := range strings.Split(strings.TrimSpace(string(md)), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "**", ""))
			}
			if strings.Trim(strings.Join(cells, ""), ":-") == "" {
				continue // the separator row
			}
			if v.Table.Head == nil {
				v.Table.Head = cells
			} else {
				v.Table.add(cells...)
			}
		case v.Headline == "":
			v.Headline = strings.NewReplacer("**", "", "`", "").Replace(line)
			v.Pass = strings.Contains(v.Headline, "gate: PASS")
		default:
			v.Notes = append(v.Notes, line)
		}
	}
	if v.Table.Head == nil || v.Headline == "" {
		return nil
	}
	return v
}

// finding says the verdict in one sentence for the page's finding: the
// headline's word (PASS, FAIL, INCONCLUSIVE) and the metrics that failed,
// each with its change from the verdict table, or could not be judged, as
// the report's closing lines name them.
func (v *verdictView) finding() string {
	word := "PASS"
	if _, rest, ok := strings.Cut(v.Headline, "gate: "); ok {
		word, _, _ = strings.Cut(rest, " ")
	}
	out := "The gate's verdict is " + word
	for _, n := range v.Notes {
		if rest, ok := strings.CutPrefix(n, "Failed: "); ok {
			names := strings.Split(strings.TrimSuffix(rest, "."), ", ")
			for i, m := range names {
				if c := v.change(m); c != "" {
					names[i] = m + " (" + c + ")"
				}
			}
			out += "; failed: " + strings.Join(names, ", ")
		}
		if rest, ok := strings.CutPrefix(n, "Inconclusive: "); ok {
			out += "; inconclusive: " + strings.TrimSuffix(rest, ".")
		}
	}
	switch word {
	case "PASS":
		out += ": nothing failed, and no metric was too weak to detect a 25 % regression"
	case "INCONCLUSIVE":
		out += ": nothing failed, but too few streams to detect a 25 % regression; gate longer runs"
	}
	return out + "."
}

// change is metric's change, candidate against baseline, as the verdict
// table gives it ("+768.5%"); "" when the table has no such row or column.
func (v *verdictView) change(metric string) string {
	col := slices.Index(v.Table.Head, "change")
	if col < 0 {
		return ""
	}
	for _, r := range v.Table.Rows {
		if len(r.Cells) > col && r.Cells[0] == metric {
			return r.Cells[col]
		}
	}
	return ""
}
