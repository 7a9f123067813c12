package study

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// derivedColumns are heads and columns of the sweep's and the capacity's
// outputs that speak of a population without being one of its figures:
// the ITL goodput (a share of streams by their max gap) and the Pareto
// front on p99 ITL.
var derivedColumns = map[string]bool{"ITL goodput": true, "itl_goodput": true, "pareto_itl": true}

// vocabularyColumns fails for each of cols that speaks of a metric but
// is none of the Vocabulary's spellings, nor a derived figure.
func vocabularyColumns(t *testing.T, where string, cols []string) {
	t.Helper()
	for _, c := range cols {
		if _, ok := reports.ColumnMetric(c); !ok && reports.SpeaksOfMetric(c) && !derivedColumns[c] {
			t.Errorf("%s: %q names a metric that is no Vocabulary row's", where, c)
		}
	}
}

// The sweep's and the capacity's tables, CSVs and JSON keys spell their
// populations as the Vocabulary does.
func TestVocabularyColumns(t *testing.T) {
	var heads, csvs []string
	for _, c := range pointColumns {
		heads = append(heads, c.head)
		csvs = append(csvs, splitComma(c.csv)...)
	}
	vocabularyColumns(t, "sweep table", heads)
	vocabularyColumns(t, "sweep CSV", csvs)

	header := func(write func(*bytes.Buffer) error) []string {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "| config") {
				var out []string
				for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
					out = append(out, strings.TrimSpace(c))
				}
				return out
			}
		}
		return strings.Split(strings.TrimSpace(b.String()), ",")
	}
	for _, target := range []bool{false, true} {
		r := &CapacityResult{Capacity: []Capacity{{Config: "c"}}}
		if target {
			r.Capacity[0].Target = &TargetResult{}
		}
		vocabularyColumns(t, "capacity table", header(func(b *bytes.Buffer) error { return WriteCapacityTable(b, r, reports.FormatMarkdown) }))
	}
	vocabularyColumns(t, "capacity CSV", header(func(b *bytes.Buffer) error { return WriteCapacityCSV(b, &CapacityResult{}) }))
	vocabularyColumns(t, "sweep CSV", header(func(b *bytes.Buffer) error { return WriteSweepCSV(b, &SweepResult{}) }))

	for _, v := range []any{Capacity{}, Metrics{}, Point{}} {
		var keys []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			keys = append(keys, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		vocabularyColumns(t, rt.Name()+"'s JSON", keys)
	}
}
