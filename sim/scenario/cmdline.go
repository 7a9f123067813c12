package scenario

import (
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/itlsim/itlsim/sim"
)

// FieldValue is a flag that sets one scenario field, as given on a command
// line: its name, the field's path, the text and whether a comma list
// compares.
type FieldValue struct {
	Flag, Path, Value string
	List              bool
}

// CommandLine is what a command line says about the runs it wants: a
// scenario file (or the default), field flags, --set and --vary.
type CommandLine struct {
	Path string // the scenario file ("" for the built-in default)
	Data []byte // its contents
	// Files is where the runs read a model's config.json (sim.Config.Files).
	Files fs.FS
	// Fields are the field flags given, in the order their flags are
	// defined.
	Fields      []FieldValue
	Sets        []string // --set path=value
	Vary        []string // --vary path=v1,v2
	SkipBadRows bool
	// Adjust, when not nil, changes the base configuration after the
	// fields and --set and before the comparisons; setBy tells which flag
	// set each field ("--seed 5", "--set seed=5").
	Adjust func(base *sim.Config, setBy map[string]string) error
	// ApplyProfile replaces a variant's cost model (and server section)
	// with its cost.profile's; what the command line sets or compares is
	// applied again over it.
	ApplyProfile func(cfg *sim.Config) error
}

// Built is the runs a command line describes.
type Built struct {
	Variants []Variant
	File     File // the scenario file as read (zero without one)
	// SetsField tells whether the command line sets or compares a field.
	SetsField func(path string) bool
}

// Build builds the runs the command line asks for: the scenario file (or
// the default), the field flags and --set, the comparisons, and a cost
// profile (cost.profile) applied under what the command line sets.
func Build(c CommandLine) (Built, error) {
	base := sim.DefaultConfig()
	var cmps []Comparison
	var parsed File
	if c.Path != "" {
		f, err := Load(c.Path, c.Data)
		if err != nil {
			return Built{}, err
		}
		base, parsed = f.Config, f
		for _, s := range f.Compare {
			cmp, err := ParseComparison(s)
			if err != nil {
				return Built{}, fmt.Errorf("%s: compare: %w", c.Path, err)
			}
			cmp.Origin = c.Path + ": compare: " + s
			cmps = append(cmps, cmp)
		}
	}
	base.Files = c.Files
	// setBy records which flag set each field on the command line, so that
	// a field set twice (--seed 5 --set seed=6) is an error rather than one
	// value silently replacing the other. A comparison of a set field
	// replaces the value in every run, and its labels say so.
	setBy := map[string]string{}
	var explicit []Override // the fields the command line sets, in order
	for _, s := range c.Fields {
		v := s.Value
		if strings.TrimSpace(v) == "" {
			return Built{}, fmt.Errorf("--%s: %s: expected a value, got %q%s", s.Flag, s.Path, v, OffHint(s.Path))
		}
		switch {
		case strings.HasSuffix(s.Path, "_ms"):
			v = DurationsIn(v, time.Millisecond)
		case strings.HasSuffix(s.Path, "_s"):
			v = DurationsIn(v, time.Second)
		}
		if s.List && strings.Contains(v, ",") {
			cmp, err := ParseComparison(s.Path + "=" + v)
			if err != nil {
				return Built{}, fmt.Errorf("--%s: %w", s.Flag, err)
			}
			cmp.Origin = "--" + s.Flag + " " + s.Value
			cmps = append(cmps, cmp)
			continue
		}
		if err := Set(&base, s.Path, v); err != nil {
			return Built{}, fmt.Errorf("--%s: %w", s.Flag, err)
		}
		setBy[s.Path] = "--" + s.Flag + " " + s.Value
		explicit = append(explicit, Override{Path: s.Path, Value: v})
	}
	if c.SkipBadRows {
		base.Workload.SkipBadRows = true
	}
	for _, s := range c.Sets {
		path, val, ok := strings.Cut(s, "=")
		if !ok {
			continue // ApplySets names the malformed entry
		}
		if strings.TrimSpace(val) == "" {
			return Built{}, fmt.Errorf("--set %s: %s: expected a value, got %q%s", s, path, val, OffHint(path))
		}
		if by, ok := setBy[path]; ok {
			return Built{}, fmt.Errorf("--set %s: %s is already set (by %s)", s, path, by)
		}
		setBy[path] = "--set " + s
		explicit = append(explicit, Override{Path: path, Value: val})
	}
	if err := ApplySets(&base, c.Sets); err != nil {
		return Built{}, err
	}
	if c.Adjust != nil {
		if err := c.Adjust(&base, setBy); err != nil {
			return Built{}, err
		}
	}
	for _, s := range c.Vary {
		cmp, err := ParseComparison(s)
		if err != nil {
			return Built{}, fmt.Errorf("--vary: %w", err)
		}
		cmp.Origin = "--vary " + s
		cmps = append(cmps, cmp)
	}
	setsField := func(path string) bool {
		if _, ok := setBy[path]; ok {
			return true
		}
		for _, c := range cmps {
			if c.Path == path {
				return true
			}
		}
		return false
	}
	if setsField("workload.duration_s") && !setsField("workload.requests") {
		// A duration given on the command line means the run to last that
		// long, not to stop at the default (or the file's) request count.
		base.Workload.Requests = 0
	}
	variants, err := Expand(base, cmps)
	if err != nil {
		return Built{}, err
	}
	// A profile replaces the cost model (and server) section; what the
	// command line sets or compares still wins over it.
	for i := range variants {
		v := &variants[i]
		if v.Config.Cost.Profile == "" || c.ApplyProfile == nil {
			continue
		}
		if err := c.ApplyProfile(&v.Config); err != nil {
			return Built{}, err
		}
		for _, ov := range append(append([]Override(nil), explicit...), v.Overrides...) {
			if err := Set(&v.Config, ov.Path, ov.Value); err != nil {
				return Built{}, err
			}
		}
	}
	return Built{Variants: variants, File: parsed, SetsField: setsField}, nil
}
