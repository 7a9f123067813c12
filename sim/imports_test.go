package sim_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// osAllowed are the non-test files under sim/ that still import os, each to
// read one file a user names; they are to take bytes or an fs.FS instead,
// and the list may only shrink.
var osAllowed = map[string]bool{}

// TestEngineImportsNoReaders parses the imports of every Go file under
// sim/ (this folder and its subpackages): none, tests included, imports a
// reports package (the engine sits below the readers of measured files; a
// test that needs the metric definitions lives in reports), and no non-test
// file imports os or io/ioutil except the files in osAllowed.
func TestEngineImportsNoReaders(t *testing.T) {
	const module = "github.com/itlsim/itlsim/"
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		test := strings.HasSuffix(path, "_test.go")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if !test {
			files++
		}
		rel := filepath.ToSlash(path)
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			switch {
			case p == module+"reports" || strings.HasPrefix(p, module+"reports/"):
				t.Errorf("sim/%s imports %s: nothing under sim/ may import a reports package", rel, p)
			case (p == "os" || p == "io/ioutil") && !test && !osAllowed[rel]:
				t.Errorf("sim/%s imports %s: code under sim/ takes bytes or an fs.FS, the caller opens files", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 30 {
		t.Fatalf("parsed only %d files under sim/: the walk missed the packages", files)
	}
}
