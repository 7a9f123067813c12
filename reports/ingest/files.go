package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/itlsim/itlsim/reports"
)

// ReadFiles reads every file; a file holding several runs gives
// several recordings. Names are made unique across files.
func ReadFiles(paths []string, f Format) ([]Recording, error) {
	var all []Recording
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		recs, err := Parse(p, data, f)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	seen := map[string]int{}
	for i := range all {
		seen[all[i].Name]++
	}
	for i := range all {
		if seen[all[i].Name] > 1 {
			all[i].Name = all[i].File + ":" + all[i].Name
		}
	}
	return all, nil
}

// ReadDocument decodes one --json result file.
func ReadDocument(path string) (reports.Document, error) {
	var doc reports.Document
	f, err := os.Open(path)
	if err != nil {
		return doc, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(3); bytes.Equal(head, []byte("\ufeff")) {
		br.Discard(3) // a byte-order mark, as editors on Windows write
	}
	if err := json.NewDecoder(br).Decode(&doc); err != nil {
		// Read the file again, on this error path only, to say where.
		if data, rerr := os.ReadFile(path); rerr == nil {
			err = JSONError(data, err)
		}
		return doc, fmt.Errorf("%s: not an itlsim --json result: %w", path, err)
	}
	if len(doc.Runs) == 0 {
		data, _ := os.ReadFile(path)
		if f, derr := Detect(path, data); derr == nil {
			return doc, fmt.Errorf("%s: not an itlsim --json result but measured streams (%s): make its report with itlsim analyze %s --html FILE", path, f, path)
		}
		if bytes.Contains(data, []byte(`"runs"`)) {
			return doc, fmt.Errorf("%s: no runs", path)
		}
		return doc, fmt.Errorf("%s: not an itlsim --json result: it has no \"runs\" (give report the file itlsim run --json or analyze --json wrote)", path)
	}
	return doc, reports.CheckSchema(path, doc.SchemaVersion)
}
