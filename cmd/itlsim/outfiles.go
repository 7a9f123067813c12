package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Output files.
//
// Every file a flag names (--json, --streams, --timelines, --html, -o) is
// checked before the command does its work, so a bad path fails at once
// rather than after a long simulation; it is written to a temporary file
// beside its target while the work runs; and the temporary files are renamed
// over their targets only once every output of the invocation has been
// written. A failed or interrupted command leaves no output file behind, not
// even a partial one, and never half of its outputs.
//
// A path that is a symbolic link is written through: the link stays and its
// target is replaced. An existing FIFO or device (/dev/null, /dev/stdout, a
// named pipe) cannot be replaced and needs no protection from partial
// writes, so it is written in place, when its turn comes.

// tempFiles is the registry of the temporary files one invocation has
// created and not yet renamed or removed. Main makes one per invocation and
// removes whatever it still holds on return and on SIGINT or SIGTERM; after
// removeAll it creates no more.
type tempFiles struct {
	mu       sync.Mutex
	names    map[string]bool
	inputs   []inputFile // every file the invocation reads: no output may replace one
	stopped  bool
	graceful func() // called on the first SIGINT or SIGTERM instead of exiting; nil: exit
}

// stopGracefully makes the first SIGINT or SIGTERM call stop (a command's
// context cancel) instead of exiting, so the command can write what it has;
// the returned func undoes it.
func (t *tempFiles) stopGracefully(stop func()) (undo func()) {
	t.mu.Lock()
	t.graceful = stop
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.graceful = nil
		t.mu.Unlock()
	}
}

// takeGraceful returns the graceful stop, if any, and clears it.
func (t *tempFiles) takeGraceful() func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.graceful
	t.graceful = nil
	return f
}

func newTempFiles() *tempFiles { return &tempFiles{names: map[string]bool{}} }

// reads registers files the invocation reads (what names them: "FILE",
// "--workload"). Every output of the invocation is checked against every
// input registered before its check, whichever part of the command read it
// (the scenario loader registers the scenario, its trace and its profile).
func (t *tempFiles) reads(what string, paths ...string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range paths {
		if p != "" {
			t.inputs = append(t.inputs, inputFile{what, p})
		}
	}
}

// readFiles is a copy of the inputs registered so far.
func (t *tempFiles) readFiles() []inputFile {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]inputFile(nil), t.inputs...)
}

// errStopped is what create returns once removeAll has run.
var errStopped = errors.New("stopped: temporary files are being removed")

// create makes a temporary file in dir whose name starts with prefix.
func (t *tempFiles) create(dir, prefix string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return nil, errStopped
	}
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	t.names[f.Name()] = true
	return f, nil
}

// remove closes and removes one temporary file.
func (t *tempFiles) remove(f *os.File) {
	f.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names[f.Name()] {
		os.Remove(f.Name())
		delete(t.names, f.Name())
	}
}

// renameAll renames each temporary file over its target, in order, under
// the lock so that removeAll never runs in the middle. It stops at the
// first failure and returns its index.
func (t *tempFiles) renameAll(from, to []string) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return 0, errStopped
	}
	for i := range from {
		if err := os.Rename(from[i], to[i]); err != nil {
			return i, err
		}
		delete(t.names, from[i])
	}
	return len(from), nil
}

// removeAll removes every registered temporary file and refuses to create
// more. It is safe to call from a signal handler's goroutine and more than
// once.
func (t *tempFiles) removeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for n := range t.names {
		os.Remove(n)
		delete(t.names, n)
	}
}

// count is how many temporary files are registered (for tests).
func (t *tempFiles) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.names)
}

// outputs is the files one command writes, and the files it reads, which
// no output may replace.
type outputs struct {
	temps  *tempFiles
	files  []*outFile
	inputs []inputFile
}

// inputFile is a file the command reads: what names it ("FILE", "--workload")
// and its path.
type inputFile struct{ what, path string }

// reads registers path, named by what, as an input of the command: check
// refuses an output that would replace it. An empty path is no input. The
// input is the invocation's (see tempFiles.reads), so a later set of
// outputs is checked against it too.
func (o *outputs) reads(what string, paths ...string) {
	if o.temps != nil {
		o.temps.reads(what, paths...)
		return
	}
	for _, p := range paths {
		if p != "" {
			o.inputs = append(o.inputs, inputFile{what, p})
		}
	}
}

func newOutputs(temps *tempFiles) *outputs { return &outputs{temps: temps} }

// outFile is one output file: the flag and the path the user gave, the file
// they resolve to and, until commit, the temporary file holding its
// contents. Its methods report errors as "FLAG PATH: what went wrong".
type outFile struct {
	flag, path string
	temps      *tempFiles
	target     string      // path with symbolic links followed
	mode       fs.FileMode // of the written file: an existing file's own, or 0644
	direct     bool        // an existing FIFO or device: written in place
	info       fs.FileInfo // the existing target's (nil: none)
	tmp        *os.File    // regular targets: the contents until commit
	scratch    []string    // other temporary files made for this output
}

// add plans the output path named by flag ("--json"). An empty path is no
// output and gives nil. Call check before writing.
func (o *outputs) add(flag, path string) *outFile {
	if path == "" {
		return nil
	}
	f := &outFile{flag: flag, path: path, temps: o.temps}
	o.files = append(o.files, f)
	return f
}

// check makes sure, before any work, that every output can be written:
// its directory exists and takes a new file, it is not a directory, an
// existing file is writable, and no two flags name the same file. It
// creates the temporary files of regular targets; discard (or Main)
// removes them when the command fails.
func (o *outputs) check() error {
	for _, f := range o.files {
		if err := f.resolve(); err != nil {
			return fmt.Errorf("%s %s: %w", f.flag, f.path, err)
		}
		if abs, err := filepath.Abs(f.target); err == nil {
			f.target = abs
		}
	}
	for i, a := range o.files {
		for _, b := range o.files[:i] {
			if a.charDevice() && b.charDevice() {
				// /dev/null or a terminal named twice is written twice.
				continue
			}
			if a.target == b.target || a.info != nil && b.info != nil && os.SameFile(a.info, b.info) {
				return fmt.Errorf("%s %s and %s %s name the same file", b.flag, b.path, a.flag, a.path)
			}
		}
	}
	if err := o.checkInputs(); err != nil {
		return err
	}
	for _, f := range o.files {
		if f.direct {
			continue
		}
		tmp, err := f.temps.create(filepath.Dir(f.target), "."+filepath.Base(f.target)+".tmp-")
		if err != nil {
			return f.fail(fmt.Errorf("cannot create a file in directory %s: %w", filepath.Dir(f.target), pathErr(err)))
		}
		f.tmp = tmp
	}
	return nil
}

// checkInputs refuses an output that is one of the inputs: the same path
// once links are followed, or the same file by identity (a hard link, a
// bind mount). Character devices (/dev/stdin and /dev/stdout lead to one
// terminal) are exempt. An input that cannot be found is left for the
// command to report when it reads it.
func (o *outputs) checkInputs() error {
	for _, in := range append(o.temps.readFiles(), o.inputs...) {
		resolved, err := filepath.EvalSymlinks(in.path)
		if err != nil {
			continue
		}
		if abs, err := filepath.Abs(resolved); err == nil {
			resolved = abs
		}
		info, err := os.Stat(in.path)
		if err != nil {
			continue
		}
		for _, f := range o.files {
			if f.charDevice() {
				continue
			}
			if f.target == resolved || f.info != nil && os.SameFile(f.info, info) {
				what := in.what
				if what != "" {
					what = " (" + what + ")"
				}
				return fmt.Errorf("%s %s: is an input of this command, %s%s: writing it would destroy what is read; choose another path",
					f.flag, f.path, in.path, what)
			}
		}
	}
	return nil
}

// charDevice tells whether the output is a character device, such as
// /dev/null or a terminal, which several outputs can share. (Two outputs to
// one FIFO cannot: its reader would stop at the end of the first.)
func (f *outFile) charDevice() bool {
	if !f.direct {
		return false
	}
	fi, err := os.Stat(f.target)
	return err == nil && fi.Mode()&fs.ModeCharDevice != 0
}

// maxLinks bounds the symbolic links followed from one path, as the
// kernel's ELOOP does.
const maxLinks = 40

// resolve follows path's symbolic links to the file to write and checks it.
func (f *outFile) resolve() error {
	if strings.HasSuffix(f.path, "/") || strings.HasSuffix(f.path, string(filepath.Separator)) {
		if fi, err := os.Stat(f.path); err == nil && fi.IsDir() {
			return errors.New("is a directory")
		}
		return errors.New("expected a file name, not a directory (the path ends in a separator)")
	}
	p := filepath.Clean(f.path)
	for range maxLinks {
		userDir := filepath.Dir(p)
		dir, err := filepath.EvalSymlinks(userDir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("directory %s does not exist", userDir)
			}
			return fmt.Errorf("directory %s: %w", userDir, pathErr(err))
		}
		dfi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("directory %s: %w", userDir, pathErr(err))
		}
		if !dfi.IsDir() {
			return fmt.Errorf("%s is not a directory", userDir)
		}
		p = filepath.Join(dir, filepath.Base(p))
		if procFile(p) {
			// /dev/stdout, /dev/fd/N: an open file of a process, written
			// through the kernel's link, never replaced.
			fi, err := os.Stat(p)
			if err != nil {
				return pathErr(err)
			}
			if fi.IsDir() {
				return errors.New("is a directory")
			}
			f.target, f.direct = p, true
			return nil
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.target, f.mode = p, 0o644
			return nil
		case err != nil:
			return pathErr(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return pathErr(err)
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(dir, link)
			}
			p = link
			continue
		case fi.IsDir():
			return errors.New("is a directory")
		case fi.Mode().IsRegular():
			// Writable? Opened without truncating: nothing changes.
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("cannot write to the file: %w", pathErr(err))
			}
			w.Close()
			f.target, f.mode, f.info = p, fi.Mode().Perm(), fi
			return nil
		default:
			f.target, f.direct, f.info = p, true, fi
			return nil
		}
	}
	return fmt.Errorf("more than %d symbolic links", maxLinks)
}

// procFile tells whether p is in /proc, where /dev/stdout and /dev/fd/N
// lead: links to a process's open files that cannot be replaced.
func procFile(p string) bool {
	return p == "/proc" || strings.HasPrefix(p, "/proc/")
}

// pathErr drops the operation and the path from a *fs.PathError (the
// message names the user's path instead).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// write writes the output's contents: into its temporary file, or straight
// into a FIFO or device.
func (f *outFile) write(fn func(w *os.File) error) error {
	if f.direct {
		w, err := os.OpenFile(f.target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return f.fail(err)
		}
		if err := fn(w); err != nil {
			w.Close()
			return f.fail(err)
		}
		if err := w.Close(); err != nil {
			return f.fail(err)
		}
		return nil
	}
	if err := fn(f.tmp); err != nil {
		return f.fail(err)
	}
	return nil
}

// scratchFile makes a temporary file for work on this output (removed by
// the caller with removeScratch, or by Main): beside the target, or in the
// system's temporary folder when the target is a device.
func (f *outFile) scratchFile(prefix string) (*os.File, error) {
	dir := os.TempDir()
	if !f.direct {
		dir = filepath.Dir(f.target)
	}
	s, err := f.temps.create(dir, prefix)
	if err != nil {
		return nil, f.fail(err)
	}
	f.scratch = append(f.scratch, s.Name())
	return s, nil
}

func (f *outFile) removeScratch(s *os.File) { f.temps.remove(s) }

// fail reports err as this output's: an operation on one of its files
// becomes "FLAG PATH: OP: ERROR", without the temporary file's name.
func (f *outFile) fail(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && f.owns(pe.Path) {
		return fmt.Errorf("%s %s: %s: %w", f.flag, f.path, pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) && f.owns(le.Old) {
		if fi, serr := os.Stat(f.target); serr == nil && fi.IsDir() {
			return fmt.Errorf("%s %s: is a directory", f.flag, f.path)
		}
		return fmt.Errorf("%s %s: cannot replace the file: %w", f.flag, f.path, le.Err)
	}
	return fmt.Errorf("%s %s: %w", f.flag, f.path, err)
}

// owns tells whether name is one of the output's files.
func (f *outFile) owns(name string) bool {
	if name == f.target || f.tmp != nil && name == f.tmp.Name() {
		return true
	}
	for _, s := range f.scratch {
		if name == s {
			return true
		}
	}
	return false
}

// commit closes every temporary file and renames each over its target.
// Nothing is renamed unless every file was written and closed.
func (o *outputs) commit() error {
	var from, to []string
	var files []*outFile
	for _, f := range o.files {
		if f.tmp == nil {
			continue
		}
		if err := f.tmp.Close(); err != nil {
			return f.fail(err)
		}
		if err := os.Chmod(f.tmp.Name(), f.mode); err != nil {
			return f.fail(err)
		}
		from, to, files = append(from, f.tmp.Name()), append(to, f.target), append(files, f)
	}
	if i, err := o.temps.renameAll(from, to); err != nil {
		if i < len(files) {
			return files[i].fail(err)
		}
		return err
	}
	for _, f := range files {
		f.tmp = nil
	}
	return nil
}

// discard removes the temporary files not committed.
func (o *outputs) discard() {
	for _, f := range o.files {
		if f.tmp != nil {
			o.temps.remove(f.tmp)
			f.tmp = nil
		}
	}
}
