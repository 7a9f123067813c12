package html

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/itlsim/itlsim/reports"
)

// table is one plain HTML table of the page.
type table struct {
	ID      string
	Caption string
	// Collapsed tables (long ones: time series, chunk times) sit in a
	// closed <details>; they still work without scripts.
	Collapsed bool
	Head      []string
	Rows      []tableRow
	// Wrap, when > 0, is the column of long prose, wrapped (td.wrap).
	Wrap int
}

// tableRow is a row of cells, or a section heading spanning the table.
type tableRow struct {
	Section string
	Cells   []string
}

func (t *table) add(cells ...string) { t.Rows = append(t.Rows, tableRow{Cells: cells}) }

// summaryTable is the terminal's comparison table, row for row: it is
// rendered by reports.WriteSummaryTable (markdown form) and read back, so
// the page can never disagree with the terminal. Run names are replaced by
// placeholders for that round trip (a name may hold '|' or a line break)
// and the header is built here.
func summaryTable(runs []reports.Run, names []string) (table, error) {
	t := table{ID: "table-summary", Caption: "Summary: the rows of the terminal table, one column per run",
		Head: append([]string{"metric"}, names...)}
	anon := make([]reports.Run, len(runs))
	for i := range runs {
		anon[i] = runs[i]
		anon[i].Name = fmt.Sprintf("run%d", i)
		anon[i].Streams = nil
	}
	var buf bytes.Buffer
	if err := reports.WriteSummaryRows(&buf, anon, reports.FormatMarkdown); err != nil {
		return table{}, err
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) < 2 {
		return table{}, fmt.Errorf("summary table: unexpected form %q", buf.String())
	}
	for _, line := range lines[2:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
			return table{}, fmt.Errorf("summary table: unexpected line %q", line)
		}
		cells := strings.Split(line[1:len(line)-1], "|")
		if len(cells) != len(runs)+1 {
			return table{}, fmt.Errorf("summary table: %d cells in %q, want %d", len(cells), line, len(runs)+1)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if label, ok := strings.CutPrefix(cells[0], "**"); ok && strings.Join(cells[1:], "") == "" {
			t.Rows = append(t.Rows, tableRow{Section: strings.TrimSuffix(label, "**")})
			continue
		}
		t.add(cells...)
	}
	return t, nil
}

// splitZeroRows moves the rows that are zero (or n/a) for every run out of
// the summary into a collapsed table of their own, so the summary shows
// what differs from nothing; a section heading stays with the rows it
// heads, in either table.
func splitZeroRows(t table) (kept, zero table) {
	kept = table{ID: t.ID, Caption: t.Caption, Head: t.Head}
	zero = table{ID: t.ID + "-zero", Caption: "Rows that are zero or n/a for every run", Head: t.Head, Collapsed: true}
	var section string
	keptSec, zeroSec := false, false
	for _, r := range t.Rows {
		if r.Section != "" {
			section, keptSec, zeroSec = r.Section, false, false
			continue
		}
		allZero := true
		for _, c := range r.Cells[1:] {
			allZero = allZero && zeroCell(c)
		}
		if allZero {
			if !zeroSec && section != "" {
				zero.Rows = append(zero.Rows, tableRow{Section: section})
				zeroSec = true
			}
			zero.Rows = append(zero.Rows, r)
			continue
		}
		if !keptSec && section != "" {
			kept.Rows = append(kept.Rows, tableRow{Section: section})
			keptSec = true
		}
		kept.Rows = append(kept.Rows, r)
	}
	return kept, zero
}

// zeroCell tells whether a summary cell says nothing: only zeros and their
// punctuation ("0", "0.0%", "0 / 0", "0.0 (0.0%)"), or n/a.
func zeroCell(c string) bool {
	if c == "n/a" || c == "-" || c == "–" {
		return true
	}
	return strings.Trim(c, "0./%() ") == "" && strings.Contains(c, "0")
}

// metric is the Vocabulary's row of p: the names the page's heads and
// labels give it.
func metric(p reports.Population) reports.Metric {
	m, _ := reports.MetricOf(p)
	return m
}
