package study

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// FormatVersion is part of every content key and the schema_version of
// every shard file (points and plan): a change to what a point file holds
// changes it, so files of an older itlsim are never mixed in. Version 2
// wraps each unit with its key and version.
const FormatVersion = 2

// MaxFileBytes bounds a shard file read: a point file is a few kilobytes
// (a capacity search's, some hundreds), so anything larger is not one.
const MaxFileBytes = 64 << 20

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
	SchemaVersion int      `json:"schema_version"`
	Command       string   `json:"command"`
	Args          []string `json:"args"`
	// ShardCount is the number of shards the points are split into (1: one
	// machine computes them all): every shard of the directory must use
	// it, and a merge names the shards whose points are missing.
	ShardCount int `json:"shard_count"`
}

// pointFile is what a point file holds: the unit, with the content key
// it is filed under (so a file renamed or copied under another key is
// refused) and the format's version.
type pointFile struct {
	SchemaVersion int             `json:"schema_version"`
	Key           string          `json:"key"`
	Unit          json.RawMessage `json:"unit"`
}

// PlanFile is the manifest's name in a shard directory.
const PlanFile = "plan.json"

// Dir is a directory of shard files, one per unit, named by content key.
type Dir struct{ Path string }

func (d Dir) file(key string) string { return filepath.Join(d.Path, key+".json") }

// File is the path of the unit's file.
func (d Dir) File(key string) string { return d.file(key) }

// Has tells whether the unit's file is present.
func (d Dir) Has(key string) bool {
	_, err := os.Stat(d.file(key))
	return err == nil
}

// Put writes v as the unit's file, atomically: into a temporary file in
// the directory, then renamed, so a reader (or a retried pod) sees the
// whole file or none.
func (d Dir) Put(key string, v any) error {
	u, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(pointFile{FormatVersion, key, u}, "", "  ")
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

// Get reads the unit's file into v. Nothing in it is trusted: the file
// must be a regular file of at most MaxFileBytes (a FIFO or device named
// like a point file is refused before it is opened), one JSON object
// without duplicate keys or trailing data, of this FormatVersion, filed
// under its own key, and every point in it must carry its summary. Errors
// name the file.
func (d Dir) Get(key string, v any) error {
	name := d.file(key)
	b, err := readRegular(name)
	if err != nil {
		return err
	}
	u, err := ParsePointFile(key, b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := json.Unmarshal(u, v); err != nil {
		return fmt.Errorf("%s: not a point file of this itlsim: %w", name, err)
	}
	return nil
}

// ParsePointFile checks the bytes of the point file of key and returns
// its unit (a Point of a sweep, a ConfigSearch of a capacity study).
func ParsePointFile(key string, b []byte) (json.RawMessage, error) {
	if err := CheckJSON(b); err != nil {
		return nil, fmt.Errorf("not a point file: %w", err)
	}
	var pf pointFile
	if err := json.Unmarshal(b, &pf); err != nil {
		return nil, fmt.Errorf("not a point file of this itlsim: %w", err)
	}
	if err := checkVersion(pf.SchemaVersion); err != nil {
		return nil, err
	}
	if pf.Key != key {
		return nil, fmt.Errorf("holds the point of key %q, not of its name's %q: it was renamed or copied; remove it and rerun the shard", pf.Key, key)
	}
	if len(pf.Unit) == 0 || pf.Unit[0] != '{' {
		return nil, errors.New(`no "unit" object: not a point file of this itlsim`)
	}
	kind, _, _ := cutKind(key)
	if err := checkSummaries(kind, pf.Unit); err != nil {
		return nil, err
	}
	return pf.Unit, nil
}

// cutKind splits a content key into its kind and hash.
func cutKind(key string) (kind, hash string, ok bool) {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '-' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, false
}

// checkVersion refuses a shard file of another format.
func checkVersion(v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("no schema_version: written by an itlsim older than this one's shard format %d; rerun the shards", FormatVersion)
	case v != FormatVersion:
		return fmt.Errorf("schema_version %d: this itlsim reads shard format %d; rerun the shards with this itlsim", v, FormatVersion)
	}
	return nil
}

// checkSummaries makes sure every point of a unit has a summary: an
// object with whole requests and finished counts, finished ≤ requests. A
// sweep's unit is one point; a capacity search's holds its probes.
func checkSummaries(kind string, unit json.RawMessage) error {
	var points []json.RawMessage
	switch kind {
	case "capacity":
		var cs struct {
			Points []json.RawMessage `json:"points"`
		}
		if err := json.Unmarshal(unit, &cs); err != nil {
			return fmt.Errorf("unit: points: %w", err)
		}
		points = cs.Points
	default:
		points = []json.RawMessage{unit}
	}
	for i, p := range points {
		var pt struct {
			Summary *struct {
				Requests *int `json:"requests"`
				Finished *int `json:"finished"`
			} `json:"summary"`
		}
		where := "unit"
		if kind == "capacity" {
			where = fmt.Sprintf("unit: points[%d]", i)
		}
		if err := json.Unmarshal(p, &pt); err != nil {
			return fmt.Errorf("%s: malformed summary: %w", where, err)
		}
		switch s := pt.Summary; {
		case s == nil:
			return fmt.Errorf("%s: no summary", where)
		case s.Requests == nil || s.Finished == nil:
			return fmt.Errorf("%s: summary: expected requests and finished counts", where)
		case *s.Requests < 0 || *s.Finished < 0 || *s.Finished > *s.Requests:
			return fmt.Errorf("%s: summary: %d finished of %d requests: expected 0 ≤ finished ≤ requests", where, *s.Finished, *s.Requests)
		}
	}
	return nil
}

// kindOf names a file's type for a message.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// readRegular reads a shard file: a regular file (checked with Lstat
// before opening, and again on the open file, so a FIFO never blocks the
// read) of at most MaxFileBytes.
func readRegular(name string) ([]byte, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(name); err != nil {
			return nil, err
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, not a regular file: a shard writes plain files", name, kindOf(fi.Mode()))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s, not a regular file: a shard writes plain files", name, kindOf(fi.Mode()))
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes: larger than a shard file can be (%d MiB)", name, fi.Size(), MaxFileBytes>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than a shard file can be (%d MiB)", name, MaxFileBytes>>20)
	}
	return b, nil
}

// PutPlan writes the manifest, or checks that the one present is the
// same: two studies must not share a directory.
func (d Dir) PutPlan(m Manifest) error {
	m.SchemaVersion = FormatVersion
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
		var was Manifest
		if json.Unmarshal(old, &was) == nil && was.ShardCount != m.ShardCount && was.Command == m.Command && slices.Equal(was.Args, m.Args) {
			return fmt.Errorf("--shard-count %d: the study in --out %s is split into %d shards; give --shard-count %d (or another directory)", m.ShardCount, d.Path, was.ShardCount, was.ShardCount)
		}
		return fmt.Errorf("--out %s: holds the points of another study (its %s differs); give each study its own directory", d.Path, PlanFile)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--out %s: %w", d.Path, unwrapPath(err))
	}
	return d.writeAtomic(PlanFile, b)
}

// Plan reads the manifest.
func (d Dir) Plan() (Manifest, error) {
	var m Manifest
	if st, err := os.Stat(d.Path); err != nil {
		return m, err
	} else if !st.IsDir() {
		return m, fmt.Errorf("%s: not a directory of sweep or capacity shards (--out)", d.Path)
	}
	name := filepath.Join(d.Path, PlanFile)
	b, err := readRegular(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("%s: no %s: not a directory of sweep or capacity shards (--out)", d.Path, PlanFile)
		}
		return m, err
	}
	if err := CheckJSON(b); err != nil {
		return m, fmt.Errorf("%s: not a shard manifest: %w", name, err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Command == "" {
		return m, fmt.Errorf("%s: not a shard manifest (expected {\"schema_version\": %d, \"command\": ..., \"args\": [...]})", name, FormatVersion)
	}
	if err := checkVersion(m.SchemaVersion); err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	if m.ShardCount < 1 || m.ShardCount > MaxShards {
		return m, fmt.Errorf("%s: shard_count %d: expected 1 to %d", name, m.ShardCount, MaxShards)
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

// MaxShards bounds --shard-count.
const MaxShards = 100000

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
