package study

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/itlsim/itlsim/reports/progress"
)

// ComputeShard computes the units of share not yet in dir, each written
// as soon as it is done (a retried pod resumes), and says so on stderr.
// line, when not nil, shows the units done.
func ComputeShard[T any](stderr io.Writer, line *progress.Line, dir Dir, keys []string, share []int, workers int, fn func(i int) (T, error)) error {
	var todo []int
	for _, i := range share {
		if !dir.Has(keys[i]) {
			todo = append(todo, i)
		}
	}
	_, err := Map(len(todo), workers, func(k int) (struct{}, error) {
		v, err := fn(todo[k])
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, dir.Put(keys[todo[k]], v)
	}, progress.Counter(line, "units"))
	line.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "itlsim: %d of this shard's %d unit(s) computed, %d already in %s\n", len(todo), len(share), len(share)-len(todo), dir.Path)
	return nil
}

// LoadAll reads every unit from dir in order; missing ones are named,
// with the indexes of the shards (of count) that should have written them.
func LoadAll[T any](dir Dir, keys, labels []string, count int) ([]T, error) {
	out := make([]T, len(keys))
	var missing []string
	shards := map[int]bool{}
	for i, k := range keys {
		if !dir.Has(k) {
			missing = append(missing, labels[i]+" ("+k+".json)")
			shards[i%max(count, 1)] = true
			continue
		}
		if err := dir.Get(k, &out[i]); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 20 {
			shown = shown[:20]
		}
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf("\n  ... and %d more", len(missing)-len(shown))
		}
		idx := make([]string, 0, len(shards))
		for i := range max(count, 1) {
			if shards[i] {
				idx = append(idx, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("%s: %d of %d point(s) missing: shard index(es) %s of %d have not finished or failed (rerun them with --shard-index I, or the Job's failed indexes):\n  %s%s",
			dir.Path, len(missing), len(keys), strings.Join(idx, ", "), max(count, 1), strings.Join(shown, "\n  "), more)
	}
	return out, nil
}

// WriteCapacityCSV writes one row per configuration: max_rate with its
// interval (ci_low, ci_high: empty with one seed), the seeds and probes it
// used; a rate is empty (n/a) when nothing held.
func WriteCapacityCSV(w io.Writer, r *CapacityResult) error {
	cw := csv.NewWriter(w)
	head := []string{"config", "max_rate", "min_rate", "limiting_term", "gpu", "gpus", "usd_per_gpu_hour", "output_tokens_per_s",
		"tokens_per_s_per_gpu", userCol.JSON, streamP99Col.FigureKey("p99"), "usd_per_million_tokens", "pareto", "pareto_itl", "target_field", "target_value",
		"ci_low", "ci_high", "seeds", "probes"}
	sens := HasSensitivity(r.Capacity)
	if sens {
		head = append(head, "sensitivity_pct_per_pct")
	}
	_ = cw.Write(head)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	rate := func(v float64) string { // empty (n/a) when nothing held, as null in the JSON
		if v <= 0 {
			return ""
		}
		return g(v)
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return g(*v)
	}
	usd := func(v USD) string { // empty when unknown
		if v <= 0 {
			return ""
		}
		return g(float64(v))
	}
	for _, c := range r.Capacity {
		tf, tv := "", ""
		if c.Target != nil {
			tf, tv = c.Target.Field, strconv.Itoa(c.Target.Value)
		}
		row := []string{c.Config, rate(c.MaxRate), rate(c.MinRate), c.LimitingTerm, c.GPU, strconv.Itoa(c.GPUs), usd(c.USDPerGPUHour),
			g(c.OutputTokensPerS), g(c.TokensPerSPerGPU), g(c.TokensPerSPerUser), g(c.StreamP99ITLP99), usd(c.USDPerMillionTokens),
			strconv.FormatBool(c.Pareto), strconv.FormatBool(c.ParetoITL), tf, tv,
			opt(c.CILow), opt(c.CIHigh), strconv.Itoa(c.Seeds), strconv.Itoa(c.Probes)}
		if sens {
			row = append(row, opt(c.Sensitivity))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
