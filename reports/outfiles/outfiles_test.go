package outfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllOrNothing: outputs are renamed over their targets only at
// Commit; an output that fails to be written leaves every target as it
// was and no temporary file behind.
func TestAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.csv")
	if err := os.WriteFile(b, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	temps := NewTemps()
	o := New(temps)
	fa, fb := o.Add("--json", a), o.Add("--csv", b)
	if o.Add("--html", "") != nil {
		t.Error("an empty path is an output")
	}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if err := fa.Write(func(f *os.File) error { _, err := f.WriteString("new a"); return err }); err != nil {
		t.Fatal(err)
	}
	err := fb.Write(func(*os.File) error { return errors.New("disk full") })
	if err == nil || !strings.HasPrefix(err.Error(), "--csv "+b+": disk full") {
		t.Fatalf("failed write: %v", err)
	}
	o.Discard()
	if _, err := os.Stat(a); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.json exists after a failed invocation: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "old" {
		t.Errorf("b.csv holds %q, want the old contents", got)
	}
	if n := temps.Count(); n != 0 {
		t.Errorf("%d temporary files left registered", n)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want b.csv alone", len(ents))
	}

	o = New(temps)
	fa = o.Add("--json", a)
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if err := fa.Write(func(f *os.File) error { _, err := f.WriteString("done"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "done" {
		t.Errorf("a.json holds %q after Commit", got)
	}
}

// TestCheckRefuses: an output that is one of the invocation's inputs, two
// flags naming one file, a missing folder and a directory are refused
// before any work, naming the flag and the path.
func TestCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(in, []byte("seed: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		setup func(o *Outputs)
		want  string
	}{
		{"input", func(o *Outputs) { o.Reads("SCENARIO", in); o.Add("--json", in) }, "--json " + in + ": is an input of this command"},
		{"input here", func(o *Outputs) { o.ReadsHere("", in); o.Add("-o", in) }, "-o " + in + ": is an input"},
		{"twice", func(o *Outputs) { o.Add("--json", filepath.Join(dir, "x")); o.Add("--csv", filepath.Join(dir, "x")) }, "name the same file"},
		{"no folder", func(o *Outputs) { o.Add("--json", filepath.Join(dir, "none", "x")) }, "does not exist"},
		{"directory", func(o *Outputs) { o.Add("--json", dir) }, "is a directory"},
	} {
		o := New(NewTemps())
		c.setup(o)
		err := o.Check()
		o.Discard()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	if w.n > 1 {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// TestCheckedWriter keeps the first write error and refuses every later
// write with it.
func TestCheckedWriter(t *testing.T) {
	w := NewCheckedWriter(&failingWriter{})
	if _, err := w.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := w.Failed(); err != nil {
		t.Fatalf("Failed after a good write: %v", err)
	}
	if _, err := w.Write([]byte("b")); err == nil {
		t.Fatal("second write succeeded")
	}
	if _, err := w.Write([]byte("c")); err == nil || err.Error() != "broken pipe" {
		t.Errorf("later write: %v, want the first error", err)
	}
	if err := w.Failed(); err == nil || err.Error() != "broken pipe" {
		t.Errorf("Failed: %v", err)
	}
}
