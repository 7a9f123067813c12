package reports_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/reports"
)

// Every population has one row, every name is used once per output, and
// every row's JSON key is a key of the summary.
func TestVocabulary(t *testing.T) {
	keys := map[string]bool{}
	st := reflect.TypeOf(reports.Summary{})
	for i := range st.NumField() {
		keys[strings.Split(st.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	seen := map[string]bool{}
	pops := map[reports.Population]bool{}
	for _, m := range reports.Vocabulary {
		if pops[m.Pop] {
			t.Errorf("population %d has two rows", m.Pop)
		}
		pops[m.Pop] = true
		if !keys[m.JSON] {
			t.Errorf("%s: %q is not a key of the summary's JSON", m.Doc, m.JSON)
		}
		for kind, name := range map[string]string{"term": m.Term, "gate": m.Gate, "figure": m.Figure} {
			if name != "" && seen[kind+name] {
				t.Errorf("%s name %q is used twice", kind, name)
			}
			seen[kind+name] = true
		}
	}
	for p := reports.PopTTFT; p <= reports.PopTokensPerSPerUser; p++ {
		if !pops[p] {
			t.Errorf("population %d has no row in the Vocabulary", p)
		}
	}
}

// docs/metrics.md shows the Vocabulary as VocabularyMarkdown writes it.
func TestVocabularyDoc(t *testing.T) {
	data, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), reports.VocabularyMarkdown()) {
		t.Errorf("docs/metrics.md's vocabulary table is not the Vocabulary's; paste in:\n%s", reports.VocabularyMarkdown())
	}
}
