package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile writes a Go CPU profile (gzip-compressed protobuf) of the
// command, and a path it cannot create is a clear error with no output.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.prof")
	mustRunCLI(t, "run", "--requests", "200", "--cpuprofile", path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || !bytes.Equal(data[:2], []byte{0x1f, 0x8b}) {
		t.Fatalf("profile of %d bytes does not start as gzip", len(data))
	}
	r := execCLI(t, "run", "--requests", "20", "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof"))
	if r.code == 0 || !strings.Contains(r.stderr, "--cpuprofile "+filepath.Join(dir, "missing", "cpu.prof")) || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a --cpuprofile error and no output", r.code, r.stdout, r.stderr)
	}
}
