package workloads

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/workloads/seed"
)

func parsePareto(d *Dist, args []string) error {
	if len(args) != 2 && len(args) != 3 {
		return &arityError{}
	}
	lo, err := parseLength("MIN", args[0])
	if err != nil {
		return err
	}
	alpha, err := strconv.ParseFloat(args[1], 64)
	if err != nil || !(alpha > 0 && alpha <= 100) {
		return fmt.Errorf("ALPHA must be a number in (0, 100], got %q", args[1])
	}
	hi := MaxLength
	if len(args) == 3 {
		if hi, err = parseLength("MAX", args[2]); err != nil {
			return err
		}
		if lo > hi {
			return fmt.Errorf("MIN must be ≤ MAX, got MIN=%d, MAX=%d", lo, hi)
		}
	}
	d.lo, d.hi, d.alpha = lo, hi, alpha
	return nil
}

// parseTable reads LEN=W pairs into a canonical spec (sorted by LEN,
// numbers in shortest form) and the table's bounds and mean; Load builds
// the sampling table from the spec.
func parseTable(d *Dist, args []string) error {
	t, err := tableOf(args)
	if err != nil {
		return err
	}
	var b strings.Builder
	var sum, weighted float64
	d.lo, d.hi = MaxLength, 1
	for i, e := range t {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(e.v)))
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(e.w, 'g', -1, 64))
		if e.w > 0 {
			sum += e.w
			weighted += e.w * float64(e.v)
			d.lo, d.hi = min(d.lo, int(e.v)), max(d.hi, int(e.v))
		}
	}
	d.spec = b.String()
	d.mean = weighted / sum
	return nil
}

type tableEntry struct {
	v int32
	w float64
}

// tableOf parses and sorts LEN=W pairs.
func tableOf(args []string) ([]tableEntry, error) {
	var t []tableEntry
	var sum float64
	for i, a := range args {
		ls, ws, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("entry %d: expected LEN=WEIGHT, got %q", i+1, a)
		}
		v, err := parseLength("LEN", strings.TrimSpace(ls))
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(ws), 64)
		if err != nil || !(w >= 0) || math.IsInf(w, 1) || w > 1e300 {
			return nil, fmt.Errorf("entry %d: WEIGHT must be a finite number ≥ 0, got %q", i+1, strings.TrimSpace(ws))
		}
		t = append(t, tableEntry{int32(v), w + 0})
		sum += w
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return nil, fmt.Errorf("the weights must have a positive, finite sum")
	}
	slices.SortFunc(t, func(a, b tableEntry) int { return int(a.v) - int(b.v) })
	for i := 1; i < len(t); i++ {
		if t[i].v == t[i-1].v {
			return nil, fmt.Errorf("LEN %d appears twice", t[i].v)
		}
	}
	return t, nil
}

// parseEmpirical reads FILE:COLUMN; the last ':' separates them, so FILE
// may hold colons.
func parseEmpirical(params string) (Dist, error) {
	params = strings.TrimSpace(params)
	i := strings.LastIndex(params, ":")
	if i <= 0 || i == len(params)-1 {
		return Dist{}, fmt.Errorf("expected FILE:COLUMN such as \"trace.csv:num_prefill_tokens\", got %q", params)
	}
	path, col := strings.TrimSpace(params[:i]), strings.TrimSpace(params[i+1:])
	if path == "" || col == "" {
		return Dist{}, fmt.Errorf("expected FILE:COLUMN such as \"trace.csv:num_prefill_tokens\", got %q", params)
	}
	return Dist{kind: kindEmpirical, spec: path + ":" + col, lo: 1, hi: MaxLength}, nil
}

// empiricalParts splits an empirical Dist's spec.
func (d Dist) empiricalParts() (path, column string) {
	i := strings.LastIndex(d.spec, ":")
	return d.spec[:i], d.spec[i+1:]
}

// Load returns d ready to Sample: for a table it builds the sampling
// table; for an empirical Dist it reads the file's column (which must hold
// positive integers; integral decimals count) and sets Min, Max and Mean
// from it. Other kinds are returned as they are. New loads the workload's
// distributions itself.
func (d Dist) Load() (Dist, error) {
	if d.tab != nil {
		return d, nil
	}
	switch d.kind {
	case kindTable:
		args := strings.Split(d.spec, ",")
		t, err := tableOf(args)
		if err != nil {
			return Dist{}, err // cannot happen for a parsed Dist
		}
		tab := &lengthTable{}
		var sum, acc float64
		for _, e := range t {
			sum += e.w
		}
		for _, e := range t {
			if e.w == 0 {
				continue
			}
			acc += e.w
			tab.values = append(tab.values, e.v)
			tab.cum = append(tab.cum, acc/sum)
		}
		tab.cum[len(tab.cum)-1] = 1
		d.tab = tab
	case kindEmpirical:
		path, col := d.empiricalParts()
		values, err := readColumn(path, col)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return Dist{}, fmt.Errorf("%s: %w", d, err)
			}
			return Dist{}, err
		}
		var sum float64
		d.lo, d.hi = MaxLength, 1
		for _, v := range values {
			sum += float64(v)
			d.lo, d.hi = min(d.lo, int(v)), max(d.hi, int(v))
		}
		d.mean = sum / float64(len(values))
		d.tab = &lengthTable{values: values}
	}
	return d, nil
}

// sample draws one value: by inverse CDF (one uniform) or, for a file's
// column, a uniformly chosen row (one draw).
func (t *lengthTable) sample(r *seed.Rand) int {
	if t.cum == nil {
		return int(t.values[r.IntN(len(t.values))])
	}
	u := r.Float64()
	i, _ := slices.BinarySearch(t.cum, u)
	for i < len(t.cum)-1 && t.cum[i] <= u {
		i++
	}
	return int(t.values[i])
}

// readColumn reads every value of one column of a CSV with a header, or of
// one key of a JSON-lines file (.jsonl, .ndjson, .json).
func readColumn(path, name string) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int32
	if isJSONName(path) {
		lr := newLines(f, path)
		var sc jsonScanner
		for {
			line, err := lr.next()
			if err != nil {
				return nil, err
			}
			if line == nil {
				break
			}
			found := false
			sc.reset(line)
			if err := sc.open(); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, lr.line, err)
			}
			for sc.more() {
				key, err := sc.key()
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", path, lr.line, err)
				}
				if string(key) != name {
					if err := sc.skip(); err != nil {
						return nil, fmt.Errorf("%s:%d: %w", path, lr.line, err)
					}
					continue
				}
				num, err := sc.number()
				if err == nil {
					var n int32
					if n, err = parseCountBytes(num); err == nil {
						out = append(out, n)
						found = true
						continue
					}
				}
				return nil, fmt.Errorf("%s:%d: %s: %w", path, lr.line, name, err)
			}
			if err := sc.end(); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, lr.line, err)
			}
			if !found {
				return nil, fmt.Errorf("%s:%d: missing field %s", path, lr.line, name)
			}
		}
	} else {
		col := column{name: name, required: true}
		t, err := newCSV(f, path, []*column{&col})
		if err != nil {
			return nil, err
		}
		for {
			ok, err := t.read()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			n, err := t.count(&col)
			if err != nil {
				return nil, err
			}
			out = append(out, int32(n))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values in column %s", path, name)
	}
	return out, nil
}

// withBase resolves a relative empirical FILE against dir.
func (d Dist) withBase(dir string) Dist {
	if d.kind != kindEmpirical {
		return d
	}
	path, col := d.empiricalParts()
	if filepath.IsAbs(path) {
		return d
	}
	d.spec = filepath.Join(dir, path) + ":" + col
	d.tab = nil
	return d
}
