package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOutputFIFO: a named pipe is written in place, never replaced by a
// regular file, and its reader gets exactly what a regular file gets.
func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, flag := range []string{"--json", "--timelines"} {
		t.Run(flag, func(t *testing.T) {
			plain := filepath.Join(t.TempDir(), "plain")
			mustRunCLI(t, "run", "--requests", "20", flag, plain)

			got := make(chan []byte, 1)
			go func() {
				b, err := os.ReadFile(fifo) // blocks until the writer opens
				if err != nil {
					t.Errorf("reading the FIFO: %v", err)
				}
				got <- b
			}()
			r := execCLI(t, "run", "--requests", "20", flag, fifo)
			// Should the command not have opened the FIFO, this ends the
			// reader's wait; otherwise it fails or adds nothing.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			b := <-got
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if !bytes.Equal(b, mustRead(t, plain)) {
				t.Errorf("the FIFO's reader got %d bytes, a regular file %d", len(b), len(mustRead(t, plain)))
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer a FIFO: %v", fifo, err)
			}
			if got := dirNames(t, dir); len(got) != 1 {
				t.Errorf("folder holds %v", got)
			}
		})
	}
}

// TestMergeRefusesAFIFOPointFile: a named pipe named like a point file is
// a clear error naming it, never a merge blocked forever on its open.
func TestMergeRefusesAFIFOPointFile(t *testing.T) {
	dir := t.TempDir()
	mustRunCLI(t, "sweep", "--rate", "1", "--requests", "20", "--out", dir)
	points, err := filepath.Glob(filepath.Join(dir, "sweep-*.json"))
	if err != nil || len(points) != 1 {
		t.Fatalf("point files %v, %v: want one", points, err)
	}
	if err := os.Remove(points[0]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(points[0], 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan cliOutcome, 1)
	go func() { done <- execCLI(t, "merge", dir) }()
	select {
	case r := <-done:
		if r.code != 1 || !bytes.Contains([]byte(r.stderr), []byte(filepath.Base(points[0]))) || !bytes.Contains([]byte(r.stderr), []byte("named pipe")) {
			t.Errorf("merge over a FIFO point file: exit %d, stderr %q; want 1, the file and \"named pipe\"", r.code, r.stderr)
		}
	case <-time.After(30 * time.Second):
		// Unblock the merge (a writer opening the FIFO) so the test ends.
		if w, err := os.OpenFile(points[0], os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("merge blocked on a FIFO named like a point file")
	}
}
