package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
