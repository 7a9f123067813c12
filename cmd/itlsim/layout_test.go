package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The house's budgets (docs/layout.md): package main is flags plus library
// calls, at most 4,000 lines outside internal/; package sim (its own
// folder) at most 5,500. A change that needs more moves logic to the
// package it belongs in.
func TestHouseBudgets(t *testing.T) {
	for _, b := range []struct {
		dir   string
		limit int
	}{{".", 4000}, {"../../sim", 5500}} {
		files, err := filepath.Glob(filepath.Join(b.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(data), "\n")
		}
		if lines > b.limit {
			t.Errorf("%s: %d lines of non-test Go, over its budget of %d: move logic out to its package", b.dir, lines, b.limit)
		}
	}
}
