package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
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
	// SLO lists SLO terms the runs are judged by (like --slo on the command
	// line, e.g. "ttft:p95<=200ms"); package reports/slo reads them.
	SLO []string `yaml:"slo" json:"-"`
	// SLOLines are the file's line of each SLO entry, for messages.
	SLOLines []int `yaml:"-" json:"-"`
	// root is the parsed document, for Sets.
	root *yaml.Node
}

// Sets tells whether the file gives the field at path ("workload.rate")
// itself, rather than leaving it to its default.
func (f File) Sets(path string) bool {
	return f.root != nil && hasKey(f.root, strings.Split(path, ".")...)
}

var (
	unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)
	lineRef      = regexp.MustCompile(`line (\d+): `)
)

// Load decodes the bytes of the scenario file at path (the caller reads
// them) over the default configuration. Fields the file omits keep their
// defaults; unknown fields, wrong types and invalid values are errors that
// name the file and line. Unlike Parse, files the scenario names are made
// relative to path's folder.
func Load(path string, data []byte) (File, error) {
	f, err := Parse(path, data)
	if err != nil {
		return File{}, err
	}
	// Files a scenario names are found relative to the scenario itself.
	f.Workload = f.Workload.ResolvePaths(filepath.Dir(path))
	if p := f.Cost.Profile; p != "" && !filepath.IsAbs(p) {
		f.Cost.Profile = filepath.Join(filepath.Dir(path), p)
	}
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
		return File{}, yamlError(name, nil, err)
	}
	if err := checkShape(name, &root); err != nil {
		return File{}, err
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
		return File{}, yamlError(name, &root, err)
	}
	if hasKey(&root, "workload", "duration_s") && !hasKey(&root, "workload", "requests") {
		// A file that gives a duration means the run to last that long,
		// not to stop at the default request count.
		f.Workload.Requests = 0
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		return File{}, fmt.Errorf("%s:%d: a scenario file holds one YAML document; remove the extra '---' document", name, line)
	}
	if err := f.Config.Validate(); err != nil {
		return File{}, locate(name, &root, err)
	}
	if n := &root; n.Kind == yaml.DocumentNode && len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode {
		m := n.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "slo" {
				for _, item := range m.Content[i+1].Content {
					f.SLOLines = append(f.SLOLines, item.Line)
				}
			}
		}
	}
	f.root = &root
	return f, nil
}

// hasKey tells whether the document sets the field at path (mapping keys).
func hasKey(root *yaml.Node, path ...string) bool {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range path {
		if n.Kind != yaml.MappingNode {
			return false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}

// notScenario ends the message for a file that is not a scenario.
const notScenario = "to run a trace use --workload FILE; to analyze measured streams use itlsim analyze FILE"

// checkShape refuses a document that is not a mapping of fields (a CSV
// trace reads as one long string) and, for a file not named .yaml or .yml,
// a mapping most of whose keys are not scenario fields (a JSON result or
// trace), rather than listing every key as unknown.
func checkShape(name string, root *yaml.Node) error {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind == yaml.DocumentNode || n.ShortTag() == "!!null" {
		return nil // empty: every default holds
	}
	if n.Kind != yaml.MappingNode {
		got := "a list"
		if n.Kind == yaml.ScalarNode {
			got = QuoteShort(n.Value, 60)
		}
		return fmt.Errorf("%s:%d: not a scenario file (YAML mapping of fields expected, got %s); %s", name, n.Line, got, notScenario)
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return nil
	}
	known := map[string]bool{"compare": true, "slo": true}
	for _, p := range Paths() {
		known[strings.SplitN(p, ".", 2)[0]] = true
	}
	var unknown []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !known[n.Content[i].Value] {
			unknown = append(unknown, n.Content[i].Value)
		}
	}
	if len(unknown) == 0 || 2*len(unknown) < len(n.Content)/2 {
		return nil // mostly scenario fields: each unknown one is reported at its line
	}
	if len(unknown) > 4 {
		unknown = append(unknown[:4], "…")
	}
	return fmt.Errorf("%s: not a scenario file: its keys (%s) are not scenario fields; %s", name, strings.Join(unknown, ", "), notScenario)
}

// QuoteShort quotes s for a message as %q does, cut to at most max runes
// with "…" so that a huge or binary value cannot flood the terminal.
func QuoteShort(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return fmt.Sprintf("%q…", s[:i])
		}
		n++
	}
	return fmt.Sprintf("%q", s)
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
			if path == "" && key == "slo" {
				if val.Kind != yaml.SequenceNode {
					return fmt.Errorf("%s:%d: slo: expected a list of SLO terms such as [\"ttft:p95<=200ms\", \"itl-goodput>=99%%@400ms\"]", name, val.Line)
				}
				continue
			}
			switch val.Kind {
			case yaml.MappingNode, yaml.SequenceNode:
				// A scalar field given a mapping or list (a text field may
				// take a list of its own: window_s: [A, B]).
				if t, ok := leafType(p); ok && !implementsText(t) && t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
					got := "a mapping"
					if val.Kind == yaml.SequenceNode {
						got = "a list"
					}
					return fmt.Errorf("%s:%d: %s: expected %s, got %s", name, val.Line, p, kindWord(t), got)
				}
				if val.Kind == yaml.MappingNode {
					if err := walk(val, p); err != nil {
						return err
					}
				}
			case yaml.ScalarNode:
				quoted := val.ShortTag() == "!!str" && val.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.TaggedStyle) != 0
				if err := set(&scratch, p, val.Value, quoted); err != nil && !strings.Contains(err.Error(), "unknown field") {
					return fmt.Errorf("%s:%d: %w", name, val.Line, err)
				}
			}
		}
		return nil
	}
	return walk(n, "")
}

// leafType is the type of the field at path when it is a field rather than
// a section (false for a section or an unknown path).
func leafType(path string) (reflect.Type, bool) {
	t := reflect.TypeOf(sim.Config{})
	for _, key := range strings.Split(path, ".") {
		if t.Kind() != reflect.Struct || implementsText(t) {
			return nil, false
		}
		found := false
		for i := range t.NumField() {
			f := t.Field(i)
			if strings.Split(f.Tag.Get("yaml"), ",")[0] == key && f.IsExported() {
				t, found = f.Type, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	if t.Kind() == reflect.Struct && !implementsText(t) {
		return nil, false
	}
	return t, true
}

// kindWord names what a scalar field of type t takes.
func kindWord(t reflect.Type) string {
	return goWord(t.Kind().String())
}

// yamlError rewrites the YAML library's messages as "file:line: problem",
// a type error as "file:line: field.path: expected …, got …" (root, when
// known, gives the path).
func yamlError(name string, root *yaml.Node, err error) error {
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
		if m := yamlMessage.FindStringSubmatch(e); m != nil && m[1] != "" {
			line, _ := strconv.Atoi(m[1])
			prefix := fmt.Sprintf("%s:%d: ", name, line)
			if p := pathAt(root, line, m[3]); p != "" {
				prefix += p + ": "
			}
			lines = append(lines, prefix+typeMismatch(m[4], m[2], m[3]))
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

// pathAt finds the field path ("workload.classes[0].share") of the value
// on line whose text starts as value does (the YAML library cuts long
// values to "abcdefg..."); "" when none matches.
func pathAt(root *yaml.Node, line int, value string) string {
	if root == nil {
		return ""
	}
	value = strings.TrimSuffix(value, "...")
	var walk func(n *yaml.Node, path string) string
	walk = func(n *yaml.Node, path string) string {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p := walk(c, path); p != "" {
					return p
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				v := n.Content[i+1]
				if v.Line == line && strings.HasPrefix(v.Value, value) {
					return p
				}
				if q := walk(v, p); q != "" {
					return q
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if c.Line == line && c.Kind == yaml.ScalarNode && strings.HasPrefix(c.Value, value) {
					return p
				}
				if q := walk(c, p); q != "" {
					return q
				}
			}
		}
		return ""
	}
	return walk(root, "")
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

// Field returns the value of the scalar field at path in c as a file
// writes it (a distribution as its spec, a number in Go's shortest form)
// and the word for its type in help: int, uint, float, bool, string, or
// spec for a field written as text (a length distribution). ok is false
// for a section, a list or an unknown path.
func Field(c sim.Config, path string) (value, typ string, ok bool) {
	t, ok := leafType(path)
	if !ok {
		return "", "", false
	}
	v := reflect.ValueOf(c)
	for _, key := range strings.Split(path, ".") {
		for i := range v.NumField() {
			if strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0] == key {
				v = v.Field(i)
				break
			}
		}
	}
	if m, isText := v.Interface().(interface{ MarshalText() ([]byte, error) }); isText {
		b, err := m.MarshalText()
		return string(b), "spec", err == nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), "int", true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), "uint", true
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), "float", true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), "bool", true
	case reflect.String:
		return v.String(), "string", true
	}
	return "", "", false
}

func implementsText(t reflect.Type) bool {
	type textUnmarshaler interface{ UnmarshalText([]byte) error }
	return reflect.PointerTo(t).Implements(reflect.TypeOf((*textUnmarshaler)(nil)).Elem())
}

// Set assigns value to the field at path, e.g. Set(&c, "scheduler.policy",
// "orca"). A scalar field takes YAML scalar syntax; numbers are decimal, with
// '_' allowed between digits (1_000), as a file writes them. A list field
// (workload.classes) takes a YAML flow list, e.g. [{preset: chat, share: 1}].
// The value is checked for type here and for range by sim.Config.Validate.
func Set(c *sim.Config, path, value string) error {
	return set(c, path, value, false)
}

// set is Set; quoted says the value was a quoted string in a file, which a
// number or boolean field does not take.
func set(c *sim.Config, path, value string, quoted bool) error {
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
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && !implementsText(v.Type()) {
		return setYAML(v, path, value)
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
	s := strings.TrimSpace(value)
	var want any // the number the value says, to check the YAML library's reading against
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if quoted {
			return fmt.Errorf("%s: expected a non-negative integer, got the string %q (remove the quotes)", path, value)
		}
		digits, err := decimalInt(path, s, "a non-negative integer")
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return fmt.Errorf("%s: expected a non-negative integer, got %q", path, value)
		}
		want = n
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if quoted {
			return fmt.Errorf("%s: expected an integer, got the string %q (remove the quotes)", path, value)
		}
		digits, err := decimalInt(path, s, "an integer")
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return fmt.Errorf("%s: expected an integer, got %q", path, value)
		}
		want = n
	case reflect.Float32, reflect.Float64:
		if quoted {
			return fmt.Errorf("%s: expected a number, got the string %q (remove the quotes)", path, value)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xX") {
			return fmt.Errorf("%s: expected a finite number, got %q", path, value)
		}
		if integer.MatchString(s) {
			if _, err := decimalInt(path, s, "a finite number"); err != nil {
				return err
			}
		}
		want = f
	case reflect.Bool:
		if quoted {
			return fmt.Errorf("%s: expected true or false, got the string %q (remove the quotes)", path, value)
		}
	}
	old := reflect.New(v.Type()).Elem()
	old.Set(v)
	if err := node.Decode(v.Addr().Interface()); err != nil {
		v.Set(old)
		return fmt.Errorf("%s: %s", path, plainYAML(err))
	}
	// The value is read as the decimal number it reads as to a person; a
	// form the YAML library would read otherwise is refused, never
	// silently taken at another value.
	var got any
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		got = v.Uint()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		got = v.Int()
	case reflect.Float32, reflect.Float64:
		got = v.Float()
	}
	if want != nil && got != want {
		v.Set(old)
		return fmt.Errorf("%s: %q is ambiguous (YAML reads it as %v); write the number plainly", path, value, got)
	}
	return nil
}

// integer matches a decimal integer, with '_' allowed between digits.
var integer = regexp.MustCompile(`^[-+]?[0-9]+(_[0-9]+)*$`)

// decimalInt checks that s is a decimal integer (what names the expected
// kind in the message) and returns it without '_'. A leading 0 is refused:
// YAML reads 010 as the octal number 8.
func decimalInt(path, s, what string) (string, error) {
	if !integer.MatchString(s) {
		return "", fmt.Errorf("%s: expected %s, got %q", path, what, s)
	}
	digits := strings.ReplaceAll(s, "_", "")
	if d := strings.TrimLeft(digits, "+-"); len(d) > 1 && d[0] == '0' {
		return "", fmt.Errorf("%s: %q has a leading 0, which YAML reads as an octal number; write it without the leading 0", path, s)
	}
	return digits, nil
}

// setYAML sets a list or mapping field from YAML flow syntax, strictly (an
// unknown key is an error), replacing the field's value.
func setYAML(v reflect.Value, path, value string) error {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(value), &node); err != nil {
		return fmt.Errorf("%s: %s", path, plainYAML(err))
	}
	kind := "list"
	if v.Kind() == reflect.Map {
		kind = "mapping"
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = *node.Content[0]
	}
	if node.Kind == 0 || node.ShortTag() == "!!null" {
		return fmt.Errorf("%s: expected a value, got %q", path, value)
	}
	if (kind == "list" && node.Kind != yaml.SequenceNode) || (kind == "mapping" && node.Kind != yaml.MappingNode) {
		return fmt.Errorf("%s: expected a YAML %s, e.g. %s, got %q", path, kind, example(path, kind), value)
	}
	dec := yaml.NewDecoder(strings.NewReader(value))
	dec.KnownFields(true)
	ptr := reflect.New(v.Type())
	if err := dec.Decode(ptr.Interface()); err != nil {
		return fmt.Errorf("%s: %s", path, plainYAML(err))
	}
	v.Set(ptr.Elem())
	return nil
}

// example is a value to show in a message about a list or mapping field.
func example(path, kind string) string {
	if path == "workload.classes" {
		return "[{preset: chat, share: 0.7}, {preset: rag, share: 0.3}]"
	}
	if kind == "mapping" {
		return "{key: value}"
	}
	return "[a, b]"
}

// yamlMessage matches the YAML library's type errors: "line N: cannot
// unmarshal !!TAG `VALUE` into GOTYPE" (the value absent for collections).
var yamlMessage = regexp.MustCompile("^(?:line ([0-9]+): )?cannot unmarshal !!([a-z]+)(?: `(.*)`)? into ([^ ]+)$")

// plainYAML rewrites one YAML library error without its Go types and
// prefixes: "expected a number, got the string "0.1"".
func plainYAML(err error) string {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	for i, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if sm := unknownField.FindStringSubmatch(m); sm != nil {
			m = fmt.Sprintf("unknown field %q", sm[2])
		} else if sm := yamlMessage.FindStringSubmatch(m); sm != nil {
			m = typeMismatch(sm[4], sm[2], sm[3])
		} else if sm := lineRef.FindStringSubmatch(m); sm != nil {
			m = strings.Replace(m, sm[0], "", 1)
		}
		msgs[i] = m
	}
	return strings.Join(msgs, "; ")
}

// typeMismatch says, in words, that a value of YAML tag tag (with text
// value, for scalars) was given where Go type goType is expected.
func typeMismatch(goType, tag, value string) string {
	return "expected " + goWord(goType) + ", got " + yamlWord(tag, value)
}

// goWord names a Go type as a scenario value.
func goWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "uint"):
		return "a non-negative integer"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case t == "scenario.File":
		return "a mapping of scenario fields"
	}
	return "a mapping of " + t[strings.LastIndex(t, ".")+1:] + " fields"
}

// yamlWord names a YAML value by its tag.
func yamlWord(tag, value string) string {
	switch tag {
	case "str":
		return fmt.Sprintf("the string %q", value)
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "null":
		return "nothing"
	case "int", "float":
		return "the number " + value
	case "bool":
		return value
	}
	if value != "" {
		return fmt.Sprintf("%q", value)
	}
	return "a !!" + tag
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
	// Origin says how the comparison was given, for messages: "--vary
	// seed=1,2", "--seed 5,6", "s.yaml: compare: seed=1,2". Empty: path=values.
	Origin string
}

// origin is c.Origin or, when empty, "path=v1,v2".
func (c Comparison) origin() string {
	if c.Origin != "" {
		return c.Origin
	}
	return c.Path + "=" + strings.Join(c.Values, ",")
}

// MaxRuns caps the runs a set of comparisons may make: every run is
// simulated and kept in memory, so five fields of ten values (100,000 runs)
// would exhaust it.
const MaxRuns = 1000

// CheckComparisons refuses two comparisons of one field (the later one's
// values would silently replace the earlier one's under the earlier one's
// labels) and more than MaxRuns combinations.
func CheckComparisons(cmps []Comparison) error {
	seen := map[string]Comparison{}
	runs := 1.0
	var sizes []string
	for _, c := range cmps {
		if prev, ok := seen[c.Path]; ok {
			return fmt.Errorf("%s: %s is already compared (by %s); give its values in one list", c.origin(), c.Path, prev.origin())
		}
		seen[c.Path] = c
		runs *= float64(len(c.Values))
		sizes = append(sizes, strconv.Itoa(len(c.Values)))
	}
	if runs > MaxRuns {
		return fmt.Errorf("the compared values (--vary, compare: and comma lists) make %s runs (%s); the limit is %d: compare fewer values at once",
			runCount(runs), strings.Join(sizes, " × "), MaxRuns)
	}
	return nil
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

// runCount writes a product of value counts: whole below 1e15, else as 1e+20.
func runCount(n float64) string {
	if n < 1e15 {
		return strconv.FormatFloat(n, 'f', -1, 64)
	}
	return strconv.FormatFloat(n, 'g', 3, 64)
}

// Variant is one configuration of a comparison.
type Variant struct {
	Name      string
	Overrides []Override // the compared values this variant sets
	Config    sim.Config
}

// Expand applies the comparisons to base and returns one variant per
// combination, in the order the values were given (the first comparison
// varies slowest); it refuses what CheckComparisons refuses. With no comparisons it returns base alone. Every variant
// shares base's seed, so all see the same requests and draws.
func Expand(base sim.Config, cmps []Comparison) ([]Variant, error) {
	if err := CheckComparisons(cmps); err != nil {
		return nil, err
	}
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
