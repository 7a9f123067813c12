package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/itlsim/itlsim/sim"
)

// File is a decoded scenario file.
type File struct {
	sim.Config `yaml:",inline"`
	// Compare lists fields to compare, as "path=v1,v2" entries; each
	// combination of values becomes one run (like --vary on the command line).
	Compare []string `yaml:"compare" json:"-"`
}

var (
	unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)
	lineRef      = regexp.MustCompile(`line (\d+): `)
)

// Load reads a scenario file over the default configuration. Fields the
// file omits keep their defaults; unknown fields, wrong types and invalid
// values are errors that name the file and line.
func Load(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f, err := Parse(path, data)
	if err != nil {
		return File{}, err
	}
	// Files a scenario names are found relative to the scenario itself.
	f.Workload = f.Workload.ResolvePaths(filepath.Dir(path))
	if m := f.Model; strings.HasSuffix(m, ".json") && !filepath.IsAbs(m) {
		f.Model = filepath.Join(filepath.Dir(path), m)
	}
	return f, nil
}

// Parse decodes scenario YAML; name labels errors.
func Parse(name string, data []byte) (File, error) {
	f := File{Config: sim.DefaultConfig()}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return File{}, yamlError(name, err)
	}
	if err := checkScalars(name, &root); err != nil {
		return File{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) { // only comments: every default holds
			return f, nil
		}
		return File{}, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		return File{}, fmt.Errorf("%s:%d: a scenario file holds one YAML document; remove the extra '---' document", name, line)
	}
	if err := f.Config.Validate(); err != nil {
		return File{}, locate(name, &root, err)
	}
	return f, nil
}

// checkScalars sets every scalar of the file on a scratch configuration, so
// a bad value (an unparsable length distribution, a fraction for an integer,
// a NaN) is reported with its line, which the YAML library does not give
// for values it hands to a custom decoder.
func checkScalars(name string, root *yaml.Node) error {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	scratch := sim.DefaultConfig()
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			p := key
			if path != "" {
				p = path + "." + key
			}
			if path == "" && key == "compare" {
				if val.Kind != yaml.SequenceNode {
					return fmt.Errorf("%s:%d: compare: expected a list of \"path=v1,v2\" entries", name, val.Line)
				}
				continue
			}
			switch val.Kind {
			case yaml.MappingNode:
				if err := walk(val, p); err != nil {
					return err
				}
			case yaml.ScalarNode:
				if err := Set(&scratch, p, val.Value); err != nil && !strings.Contains(err.Error(), "unknown field") {
					return fmt.Errorf("%s:%d: %w", name, val.Line, err)
				}
			}
		}
		return nil
	}
	return walk(n, "")
}

// yamlError rewrites the YAML library's messages as "file:line: problem".
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := lineRef.FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("%s:%s: %s", name, m[1], strings.Replace(msg, m[0], "", 1))
		}
		return fmt.Errorf("%s: %s", name, msg)
	}
	var lines []string
	for _, e := range te.Errors {
		if m := unknownField.FindStringSubmatch(e); m != nil {
			lines = append(lines, fmt.Sprintf("%s:%s: unknown field %q (check its spelling and section)", name, m[1], m[2]))
			continue
		}
		if m := lineRef.FindStringSubmatch(e); m != nil {
			lines = append(lines, fmt.Sprintf("%s:%s: %s", name, m[1], strings.Replace(e, m[0], "", 1)))
			continue
		}
		lines = append(lines, name+": "+e)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// fieldPath matches the "a.b.c:" prefix of a validation message.
var fieldPath = regexp.MustCompile(`^([a-z0-9_]+(?:\.[a-z0-9_]+)*):`)

// locate prefixes each validation error with the file and, when the named
// field is in the file, its line.
func locate(name string, root *yaml.Node, err error) error {
	var out []string
	for _, msg := range strings.Split(err.Error(), "\n") {
		prefix := name + ": "
		if m := fieldPath.FindStringSubmatch(msg); m != nil {
			if line := lineOf(root, m[1]); line > 0 {
				prefix = fmt.Sprintf("%s:%d: ", name, line)
			}
		}
		out = append(out, prefix+msg)
	}
	return errors.New(strings.Join(out, "\n"))
}

// lineOf finds the line of the value at a dotted path in a YAML document, 0 if absent.
func lineOf(n *yaml.Node, path string) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range strings.Split(path, ".") {
		if n.Kind != yaml.MappingNode {
			return 0
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return 0
		}
		n = next
	}
	return n.Line
}

// Paths lists every settable field path of sim.Config (for help and errors).
func Paths() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" || !f.IsExported() {
				continue
			}
			if f.Type.Kind() == reflect.Struct && !implementsText(f.Type) {
				walk(f.Type, prefix+tag+".")
				continue
			}
			out = append(out, prefix+tag)
		}
	}
	walk(reflect.TypeOf(sim.Config{}), "")
	return out
}

func implementsText(t reflect.Type) bool {
	type textUnmarshaler interface{ UnmarshalText([]byte) error }
	return reflect.PointerTo(t).Implements(reflect.TypeOf((*textUnmarshaler)(nil)).Elem())
}

// Set assigns value (YAML scalar syntax) to the field at path, e.g.
// Set(&c, "scheduler.policy", "orca"). The value is checked for type here
// and for range by sim.Config.Validate.
func Set(c *sim.Config, path, value string) error {
	v := reflect.ValueOf(c).Elem()
	for _, key := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct {
			return fmt.Errorf("%s: %q is not a section", path, key)
		}
		found := false
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if strings.Split(f.Tag.Get("yaml"), ",")[0] == key && f.IsExported() {
				v = v.Field(i)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: unknown field %q; see `itlsim run --help` for field paths", path, key)
		}
	}
	if v.Kind() == reflect.Struct && !implementsText(v.Type()) {
		return fmt.Errorf("%s: is a section, not a field: got %q; give its fields on the lines below it", path, value)
	}
	// Decode the scalar with the YAML library so that overrides accept
	// exactly what files accept.
	node := yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if v.Kind() == reflect.String || implementsText(v.Type()) {
		node.Tag = "!!str"
	}
	// YAML decodes null ("", "~", "null") into a value field as a no-op;
	// an override that changes nothing is a mistake, not a default.
	if node.ShortTag() == "!!null" {
		return fmt.Errorf("%s: expected a value, got %q", path, value)
	}
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64); err != nil {
			return fmt.Errorf("%s: expected a non-negative integer, got %q", path, value)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err != nil {
			return fmt.Errorf("%s: expected an integer, got %q", path, value)
		}
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: expected a finite number, got %q", path, value)
		}
	}
	if err := node.Decode(v.Addr().Interface()); err != nil {
		msg := err.Error()
		if m := lineRef.FindStringSubmatch(msg); m != nil {
			msg = strings.Replace(msg, m[0], "", 1)
		}
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  "), "yaml: ")
		return fmt.Errorf("%s: %s", path, msg)
	}
	return nil
}

// ApplySets applies "path=value" assignments (the CLI's --set flags) in
// order; errors name the offending assignment.
func ApplySets(c *sim.Config, sets []string) error {
	for _, s := range sets {
		path, val, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--set %q: expected path=value", s)
		}
		if err := Set(c, path, val); err != nil {
			return fmt.Errorf("--set: %w", err)
		}
	}
	return nil
}

// Override is one path=value assignment.
type Override struct{ Path, Value string }

// Comparison is one compared field and its values.
type Comparison struct {
	Path   string
	Values []string
}

// ParseComparison parses "path=v1,v2": values are separated by commas, or
// by semicolons when a value itself contains commas (length specs such as
// uniform:1,10).
func ParseComparison(s string) (Comparison, error) {
	path, vals, ok := strings.Cut(s, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" || vals == "" {
		return Comparison{}, fmt.Errorf("%q: expected path=value1,value2", s)
	}
	sep := ","
	if strings.Contains(vals, ";") {
		sep = ";"
	}
	var out []string
	for v := range strings.SplitSeq(vals, sep) {
		v = strings.TrimSpace(v)
		if v == "" {
			return Comparison{}, fmt.Errorf("%q: empty value", s)
		}
		out = append(out, v)
	}
	return Comparison{Path: path, Values: out}, nil
}

// Variant is one configuration of a comparison.
type Variant struct {
	Name      string
	Overrides []Override // the compared values this variant sets
	Config    sim.Config
}

// Expand applies the comparisons to base and returns one variant per
// combination, in the order the values were given (the first comparison
// varies slowest). With no comparisons it returns base alone. Every variant
// shares base's seed, so all see the same requests and draws.
func Expand(base sim.Config, cmps []Comparison) ([]Variant, error) {
	vs := []Variant{{Config: base}}
	for _, c := range cmps {
		var next []Variant
		for _, v := range vs {
			for _, val := range c.Values {
				cfg := v.Config
				if err := Set(&cfg, c.Path, val); err != nil {
					return nil, err
				}
				ov := append(append([]Override(nil), v.Overrides...), Override{c.Path, val})
				next = append(next, Variant{Overrides: ov, Config: cfg})
			}
		}
		vs = next
	}
	for i := range vs {
		v := &vs[i]
		if err := v.Config.Validate(); err != nil {
			if len(v.Overrides) > 0 {
				return nil, fmt.Errorf("run %s: %w", label(v.Overrides), err)
			}
			return nil, err
		}
		switch {
		case len(v.Overrides) > 0:
			v.Name = label(v.Overrides)
		case base.Name != "":
			v.Name = base.Name
		default:
			v.Name = base.Scheduler.Policy
		}
		v.Config.Name = v.Name
	}
	return vs, nil
}

// label names a variant by its compared values: "chunked" for one
// comparison, "chunked/kv-reserve" for two; a number is shown with its
// field's name ("max_num_batched_tokens=512") so the column says what it is.
func label(ovs []Override) string {
	parts := make([]string, len(ovs))
	for i, o := range ovs {
		parts[i] = o.Value
		if _, err := strconv.ParseFloat(o.Value, 64); err == nil {
			key := o.Path[strings.LastIndex(o.Path, ".")+1:]
			parts[i] = key + "=" + o.Value
		}
	}
	return strings.Join(parts, "/")
}
