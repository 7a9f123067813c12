package outfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Temps is the registry of the temporary files one invocation has
// created and not yet renamed or removed. A command's main makes one per
// invocation and removes whatever it still holds on return and on SIGINT or
// SIGTERM; after RemoveAll it creates no more.
type Temps struct {
	mu       sync.Mutex
	names    map[string]bool
	inputs   []Input // every file the invocation reads: no output may replace one
	stopped  bool
	graceful func() // called on the first SIGINT or SIGTERM instead of exiting; nil: exit
}

// StopGracefully makes the first SIGINT or SIGTERM call stop (a command's
// context cancel) instead of exiting, so the command can write what it has;
// the returned func undoes it.
func (t *Temps) StopGracefully(stop func()) (undo func()) {
	t.mu.Lock()
	t.graceful = stop
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.graceful = nil
		t.mu.Unlock()
	}
}

// TakeGraceful returns the graceful stop, if any, and clears it.
func (t *Temps) TakeGraceful() func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.graceful
	t.graceful = nil
	return f
}

func NewTemps() *Temps { return &Temps{names: map[string]bool{}} }

// Reads registers files the invocation reads (what names them: "FILE",
// "--workload"). Every output of the invocation is checked against every
// input registered before its check, whichever part of the command read it
// (the scenario loader registers the scenario, its trace and its profile).
func (t *Temps) Reads(what string, paths ...string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range paths {
		if p != "" {
			t.inputs = append(t.inputs, Input{what, p})
		}
	}
}

// readFiles is a copy of the inputs registered so far.
func (t *Temps) readFiles() []Input {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Input(nil), t.inputs...)
}

// ErrStopped is what Create returns once RemoveAll has run.
var ErrStopped = errors.New("stopped: temporary files are being removed")

// Create makes a temporary file in dir whose name starts with prefix.
func (t *Temps) Create(dir, prefix string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return nil, ErrStopped
	}
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	t.names[f.Name()] = true
	return f, nil
}

// Remove closes and removes one temporary file.
func (t *Temps) Remove(f *os.File) {
	f.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names[f.Name()] {
		os.Remove(f.Name())
		delete(t.names, f.Name())
	}
}

// renameAll renames each temporary file over its target, in order, under
// the lock so that RemoveAll never runs in the middle. It stops at the
// first failure and returns its index.
func (t *Temps) renameAll(from, to []string) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return 0, ErrStopped
	}
	for i := range from {
		if err := os.Rename(from[i], to[i]); err != nil {
			return i, err
		}
		delete(t.names, from[i])
	}
	return len(from), nil
}

// RemoveAll removes every registered temporary file and refuses to create
// more. It is safe to call from a signal handler's goroutine and more than
// once.
func (t *Temps) RemoveAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for n := range t.names {
		os.Remove(n)
		delete(t.names, n)
	}
}

// Count is how many temporary files are registered (for tests).
func (t *Temps) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.names)
}

// Outputs is the files one command writes, and the files it reads, which
// no output may replace.
type Outputs struct {
	temps  *Temps
	files  []*File
	inputs []Input
}

// Input is a file the command reads: what names it ("FILE", "--workload")
// and its path.
type Input struct{ what, path string }

// Reads registers path, named by what, as an input of the command: Check
// refuses an output that would replace it. An empty path is no input. The
// input is the invocation's (see Temps.Reads), so a later set of
// outputs is checked against it too.
func (o *Outputs) Reads(what string, paths ...string) {
	if o.temps != nil {
		o.temps.Reads(what, paths...)
		return
	}
	for _, p := range paths {
		if p != "" {
			o.inputs = append(o.inputs, Input{what, p})
		}
	}
}

func New(temps *Temps) *Outputs { return &Outputs{temps: temps} }

// File is one output file: the flag and the path the user gave, the file
// they resolve to and, until Commit, the temporary file holding its
// contents. Its methods report errors as "FLAG PATH: what went wrong".
type File struct {
	flag, path string
	temps      *Temps
	target     string      // path with symbolic links followed
	mode       fs.FileMode // of the written file: an existing file's own, or 0644
	direct     bool        // an existing FIFO or device: written in place
	info       fs.FileInfo // the existing target's (nil: none)
	tmp        *os.File    // regular targets: the contents until Commit
	scratch    []string    // other temporary files made for this output
}

// Add plans the output path named by flag ("--json"). An empty path is no
// output and gives nil. Call Check before writing.
func (o *Outputs) Add(flag, path string) *File {
	if path == "" {
		return nil
	}
	f := &File{flag: flag, path: path, temps: o.temps}
	o.files = append(o.files, f)
	return f
}

// Check makes sure, before any work, that every output can be written:
// its directory exists and takes a new file, it is not a directory, an
// existing file is writable, and no two flags name the same file. It
// creates the temporary files of regular targets; Discard (or the command's main)
// removes them when the command fails.
func (o *Outputs) Check() error {
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
	if err := o.CheckInputs(); err != nil {
		return err
	}
	for _, f := range o.files {
		if f.direct {
			continue
		}
		tmp, err := f.temps.Create(filepath.Dir(f.target), "."+filepath.Base(f.target)+".tmp-")
		if err != nil {
			return f.Fail(fmt.Errorf("cannot create a file in directory %s: %w", filepath.Dir(f.target), PathErr(err)))
		}
		f.tmp = tmp
	}
	return nil
}

// CheckInputs refuses an output that is one of the inputs: the same path
// once links are followed, or the same file by identity (a hard link, a
// bind mount). Character devices (/dev/stdin and /dev/stdout lead to one
// terminal) are exempt. An input that cannot be found is left for the
// command to report when it reads it.
func (o *Outputs) CheckInputs() error {
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
func (f *File) charDevice() bool {
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
func (f *File) resolve() error {
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
			return fmt.Errorf("directory %s: %w", userDir, PathErr(err))
		}
		dfi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("directory %s: %w", userDir, PathErr(err))
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
				return PathErr(err)
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
			return PathErr(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return PathErr(err)
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
				return fmt.Errorf("cannot write to the file: %w", PathErr(err))
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

// PathErr drops the operation and the path from a *fs.PathError (the
// message names the user's path instead).
func PathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Write writes the output's contents: into its temporary file, or straight
// into a FIFO or device.
func (f *File) Write(fn func(w *os.File) error) error {
	if f.direct {
		w, err := os.OpenFile(f.target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return f.Fail(err)
		}
		if err := fn(w); err != nil {
			w.Close()
			return f.Fail(err)
		}
		if err := w.Close(); err != nil {
			return f.Fail(err)
		}
		return nil
	}
	if err := fn(f.tmp); err != nil {
		return f.Fail(err)
	}
	return nil
}

// ScratchFile makes a temporary file for work on this output (removed by
// the caller with RemoveScratch, or by the command's main): beside the target, or in the
// system's temporary folder when the target is a device.
func (f *File) ScratchFile(prefix string) (*os.File, error) {
	dir := os.TempDir()
	if !f.direct {
		dir = filepath.Dir(f.target)
	}
	s, err := f.temps.Create(dir, prefix)
	if err != nil {
		return nil, f.Fail(err)
	}
	f.scratch = append(f.scratch, s.Name())
	return s, nil
}

func (f *File) RemoveScratch(s *os.File) { f.temps.Remove(s) }

// Fail reports err as this output's: an operation on one of its files
// becomes "FLAG PATH: OP: ERROR", without the temporary file's name.
func (f *File) Fail(err error) error {
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
func (f *File) owns(name string) bool {
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

// Commit closes every temporary file and renames each over its target.
// Nothing is renamed unless every file was written and closed.
func (o *Outputs) Commit() error {
	var from, to []string
	var files []*File
	for _, f := range o.files {
		if f.tmp == nil {
			continue
		}
		if err := f.tmp.Close(); err != nil {
			return f.Fail(err)
		}
		if err := os.Chmod(f.tmp.Name(), f.mode); err != nil {
			return f.Fail(err)
		}
		from, to, files = append(from, f.tmp.Name()), append(to, f.target), append(files, f)
	}
	if i, err := o.temps.renameAll(from, to); err != nil {
		if i < len(files) {
			return files[i].Fail(err)
		}
		return err
	}
	for _, f := range files {
		f.tmp = nil
	}
	return nil
}

// Discard removes the temporary files not committed.
func (o *Outputs) Discard() {
	for _, f := range o.files {
		if f.tmp != nil {
			o.temps.Remove(f.tmp)
			f.tmp = nil
		}
	}
}

// ReadsHere registers inputs of this set of outputs alone, not of the
// invocation: what a command's arguments name before it has read anything.
func (o *Outputs) ReadsHere(what string, paths ...string) {
	for _, p := range paths {
		if p != "" {
			o.inputs = append(o.inputs, Input{what, p})
		}
	}
}

// Target is the file the output writes, its links followed (after Check).
func (f *File) Target() string { return f.target }

// Direct tells whether the output is a FIFO or device written in place.
func (f *File) Direct() bool { return f.direct }

// Temp is the temporary file holding a regular output's contents until
// Commit (nil for a direct output).
func (f *File) Temp() *os.File { return f.tmp }
