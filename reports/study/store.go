package study

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FormatVersion is part of every content key: a change to what a point
// file holds changes it, so files of an older itlsim are never mixed in.
const FormatVersion = 1

// Key is the content key of one unit of a study (a sweep point, a
// configuration's capacity search): a hash of kind, FormatVersion and
// what determines the unit's result (its configuration, rate, seed and
// measurement), so the same unit has the same key on every machine and a
// changed input never reuses an old file.
func Key(kind string, what any) (string, error) {
	b, err := json.Marshal(struct {
		Kind    string `json:"kind"`
		Version int    `json:"version"`
		What    any    `json:"what"`
	}{kind, FormatVersion, what})
	if err != nil {
		return "", fmt.Errorf("study: content key: %w", err)
	}
	sum := sha256.Sum256(b)
	return kind + "-" + hex.EncodeToString(sum[:12]), nil
}

// Manifest is what every shard writes to DIR/plan.json: the command and
// its arguments, from which `itlsim merge` rebuilds the whole plan.
type Manifest struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// PlanFile is the manifest's name in a shard directory.
const PlanFile = "plan.json"

// Dir is a directory of shard files, one per unit, named by content key.
type Dir struct{ Path string }

func (d Dir) file(key string) string { return filepath.Join(d.Path, key+".json") }

// Has tells whether the unit's file is present.
func (d Dir) Has(key string) bool {
	_, err := os.Stat(d.file(key))
	return err == nil
}

// Put writes v as the unit's file, atomically: into a temporary file in
// the directory, then renamed, so a reader (or a retried pod) sees the
// whole file or none.
func (d Dir) Put(key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return d.writeAtomic(key+".json", append(b, '\n'))
}

func (d Dir) writeAtomic(name string, b []byte) error {
	f, err := os.CreateTemp(d.Path, ".tmp-"+name+"-")
	if err != nil {
		return fmt.Errorf("--out %s: %w", d.Path, unwrapPath(err))
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(d.Path, name))
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("--out %s: %s: %w", d.Path, name, unwrapPath(werr))
	}
	return nil
}

// Get reads the unit's file into v.
func (d Dir) Get(key string, v any) error {
	b, err := os.ReadFile(d.file(key))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: not a point file of this itlsim: %w", d.file(key), err)
	}
	return nil
}

// PutPlan writes the manifest, or checks that the one present is the
// same: two studies must not share a directory.
func (d Dir) PutPlan(m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	old, err := os.ReadFile(filepath.Join(d.Path, PlanFile))
	switch {
	case err == nil && bytes.Equal(old, b):
		return nil
	case err == nil:
		return fmt.Errorf("--out %s: holds the points of another study (its %s differs); give each study its own directory", d.Path, PlanFile)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--out %s: %w", d.Path, unwrapPath(err))
	}
	return d.writeAtomic(PlanFile, b)
}

// Plan reads the manifest.
func (d Dir) Plan() (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(d.Path, PlanFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("%s: no %s: not a directory of sweep or capacity shards (--out)", d.Path, PlanFile)
		}
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Command == "" {
		return m, fmt.Errorf("%s: not a shard manifest (expected {\"command\": ..., \"args\": [...]})", filepath.Join(d.Path, PlanFile))
	}
	return m, nil
}

// CheckDir makes sure the directory exists and takes new files.
func (d Dir) CheckDir() error {
	st, err := os.Stat(d.Path)
	if err != nil {
		return fmt.Errorf("--out %s: %w", d.Path, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("--out %s: not a directory", d.Path)
	}
	f, err := os.CreateTemp(d.Path, ".tmp-check-")
	if err != nil {
		return fmt.Errorf("--out %s: %w", d.Path, unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Shard is the share of n units that shard index of count computes: units
// i with i mod count = index.
func Shard(n, index, count int) []int {
	var out []int
	for i := index; i < n; i += count {
		out = append(out, i)
	}
	return out
}

// Normalize round-trips v through its JSON, as a merge reads it back from
// a shard file: a one-machine study renders what a merge would.
func Normalize[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}
