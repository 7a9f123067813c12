package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// dirNames lists the names in dir, hidden temporary files included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// wantOutputError checks that r failed with a message holding every want,
// naming no temporary file.
func wantOutputError(t *testing.T, r cliOutcome, want ...string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("exit 0, want an error\nstdout: %.300s", r.stdout)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q lacks %q", r.stderr, w)
		}
	}
	for _, bad := range []string{".tmp-", "itlsim-timelines", "panic", "goroutine"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr holds %q: %s", bad, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty on error: %.300s", r.stdout)
	}
}

// TestOutputThroughSymlink: a --json path that is a symbolic link writes
// the link's target, keeps the link, and keeps the target's permissions.
func TestOutputThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	plain, real, link := filepath.Join(dir, "plain.json"), filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	mustRunCLI(t, "run", "--requests", "10", "--json", plain)
	mustRunCLI(t, "run", "--requests", "10", "--json", link)

	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link: %v %v", link, fi, err)
	}
	if to, _ := os.Readlink(link); to != "real.json" {
		t.Errorf("link points to %q, want real.json", to)
	}
	if !bytes.Equal(mustRead(t, real), mustRead(t, plain)) {
		t.Errorf("the link's target differs from the same run written to a plain file")
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("target's mode %v (%v), want 0640 kept", fi.Mode().Perm(), err)
	}
	if got := strings.Join(dirNames(t, dir), " "); got != "link.json plain.json real.json" {
		t.Errorf("folder holds %s", got)
	}

	// A dangling link is written through too: its target is created.
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink("new.json", dangling); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "run", "--requests", "10", "--json", dangling)
	if !bytes.Equal(mustRead(t, filepath.Join(dir, "new.json")), mustRead(t, plain)) {
		t.Errorf("the dangling link's target was not written")
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symbolic link", dangling)
	}
}

// TestOutputIsDirectory: a directory as an output is refused by name.
func TestOutputIsDirectory(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "outdir")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--requests", "10", "--json", target},
		{"run", "--requests", "10", "--json", target + "/"},
		{"run", "--requests", "10", "--timelines", target},
	} {
		flag, path := args[3], args[4]
		wantOutputError(t, execCLI(t, args...), flag+" "+path+": is a directory")
	}
	if got := dirNames(t, dir); len(got) != 1 || len(dirNames(t, target)) != 0 {
		t.Errorf("folders hold %v and %v", got, dirNames(t, target))
	}
}

// TestOutputMissingDirectory: a path in a missing directory fails before
// anything is read or simulated (the missing workload file below would
// fail the run otherwise), names the flag and the directory, and no other
// output is created.
func TestOutputMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	ok, bad := filepath.Join(dir, "ok.json"), filepath.Join(dir, "missing", "s.csv")
	r := execCLI(t, "run", "--workload", filepath.Join(dir, "no-such-trace.jsonl"), "--json", ok,
		"--timelines", filepath.Join(dir, "tl.jsonl"), "--streams", bad)
	wantOutputError(t, r, "--streams "+bad+": directory "+filepath.Join(dir, "missing")+" does not exist")
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("folder holds %v after a failed run", got)
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantOutputError(t, execCLI(t, "workload", "generate", filepath.Join(workloadTestdata, "bursty.yaml"), "-o", filepath.Join(file, "x.jsonl")),
		"-o "+filepath.Join(file, "x.jsonl")+": "+file+" is not a directory")
	wantOutputError(t, execCLI(t, "report", "nothing.json", "-o", bad), "-o "+bad+": directory")
	wantOutputError(t, execCLI(t, "analyze", "nothing.jsonl", "--html", bad), "--html "+bad+": directory")
	if got := dirNames(t, dir); len(got) != 1 {
		t.Errorf("folder holds %v after failed runs", got)
	}
}

// TestOutputSameFileTwice: two flags naming one file is an error naming
// both, however the file is spelled.
func TestOutputSameFileTwice(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.out")
	link := filepath.Join(dir, "link.out")
	symlinks := os.Symlink("same.out", link) == nil
	cases := [][]string{
		{"--json", same, "--streams", same},
		{"--json", same, "--timelines", filepath.Join(dir, ".", "sub", "..", "same.out")},
	}
	if symlinks {
		cases = append(cases, []string{"--streams", same, "--html", link})
	}
	for _, c := range cases {
		args := append([]string{"run", "--requests", "10"}, c...)
		wantOutputError(t, execCLI(t, args...), c[0]+" "+c[1]+" and "+c[2]+" "+c[3]+" name the same file")
	}
	if got := dirNames(t, dir); len(got) != 0 && !(symlinks && len(got) == 1) {
		t.Errorf("folder holds %v", got)
	}
	// /dev/null may take several outputs.
	if _, err := os.Stat(os.DevNull); err == nil && os.DevNull == "/dev/null" {
		mustRunCLI(t, "run", "--requests", "10", "--json", os.DevNull, "--streams", os.DevNull)
	}
}

// TestOutputsAllOrNothing: when one output fails while being written, no
// output is renamed into place and an existing file keeps its content.
func TestOutputsAllOrNothing(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := execCLI(t, "run", "--requests", "10", "--json", ok, "--timelines", filepath.Join(dir, "tl.jsonl"), "--streams", "/dev/full")
	wantOutputError(t, r, "--streams /dev/full: write: no space left on device")
	if got := string(mustRead(t, ok)); got != "old" {
		t.Errorf("ok.json holds %.40q, want its old content", got)
	}
	if got := dirNames(t, dir); len(got) != 1 {
		t.Errorf("folder holds %v after a failed run", got)
	}
}

// TestOutputReadOnlyFile: an existing file the user cannot write is not
// replaced.
func TestOutputReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only files")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.json")
	if err := os.WriteFile(ro, []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	wantOutputError(t, execCLI(t, "run", "--requests", "10", "--json", ro), "--json "+ro+": cannot write to the file")
	if got := string(mustRead(t, ro)); got != "keep" {
		t.Errorf("read-only file now holds %.40q", got)
	}
}

// TestTempFilesRemoveAll is what a signal does: every registered temporary
// file is removed, none is created afterwards, and the status is 128 plus
// the signal's number.
func TestTempFilesRemoveAll(t *testing.T) {
	dir := t.TempDir()
	temps := newTempFiles()
	a, err := temps.Create(dir, ".a.tmp-")
	if err != nil {
		t.Fatal(err)
	}
	b, err := temps.Create(dir, ".b.tmp-")
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("partial")
	temps.Remove(b)
	if temps.Count() != 1 || len(dirNames(t, dir)) != 1 {
		t.Fatalf("after remove: %d registered, folder %v", temps.Count(), dirNames(t, dir))
	}
	var stderr bytes.Buffer
	if code := interrupted(os.Interrupt, temps, &stderr); code != 130 {
		t.Errorf("SIGINT: status %d, want 130", code)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("folder holds %v after the signal", got)
	}
	if !strings.HasPrefix(stderr.String(), "itlsim: stopped") {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := temps.Create(dir, ".c.tmp-"); !errors.Is(err, errStopped) {
		t.Errorf("create after removeAll: %v, want errStopped", err)
	}
	if code := interrupted(syscall.SIGTERM, temps, &stderr); code != 143 {
		t.Errorf("SIGTERM: status %d, want 143", code)
	}
	a.Close()

	// Files created while removeAll runs are either removed by it or never
	// created.
	temps = newTempFiles()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				f, err := temps.Create(dir, ".race.tmp-")
				if err != nil {
					return
				}
				f.Close()
			}
		})
	}
	temps.RemoveAll()
	wg.Wait()
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("folder holds %d files after removeAll", len(got))
	}
}
