package reports

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// WriteNotes prints under the table what each file lacks, and how a live
// run kept its schedule.
func WriteNotes(w io.Writer, runs []Run, f Format) error {
	var lines []string
	for _, r := range runs {
		if r.Realtime != nil {
			for _, n := range r.Realtime.Notes {
				lines = append(lines, Printable(r.Name+" (live): "+n))
			}
		}
		if r.Source == nil {
			continue
		}
		for _, n := range r.Source.Notes {
			lines = append(lines, Printable(r.Name+" ("+r.Source.Format+"): "+n))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	if f == FormatMarkdown {
		fmt.Fprintln(w)
		for _, l := range lines {
			fmt.Fprintln(w, "- "+l)
		}
		return nil
	}
	fmt.Fprintln(w, "notes:")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

// MergeRuns concatenates the documents' runs in order. When a name occurs
// in more than one document, every run is prefixed with its file's name
// (without .json) so the page can tell them apart.
func MergeRuns(paths []string, docs [][]Run) []Run {
	files := map[string]map[int]bool{}
	clash := false
	for k, runs := range docs {
		for _, r := range runs {
			if files[r.Name] == nil {
				files[r.Name] = map[int]bool{}
			}
			files[r.Name][k] = true
			if len(files[r.Name]) > 1 {
				clash = true
			}
		}
	}
	var out []Run
	for k, runs := range docs {
		stem := strings.TrimSuffix(filepath.Base(paths[k]), ".json")
		for _, r := range runs {
			if clash {
				r.Name = stem + ": " + r.Name
			}
			out = append(out, r)
		}
	}
	return out
}
