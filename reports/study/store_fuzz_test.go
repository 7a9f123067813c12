package study

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzParsePointFile feeds merge's point-file reader arbitrary bytes under
// a sweep's and a capacity search's key: it must never panic, and what it
// accepts is a JSON object whose every point carries a consistent summary.
func FuzzParsePointFile(f *testing.F) {
	ok := fmt.Sprintf(`{"schema_version":%d,"key":"sweep-abc","unit":{"rate":1,"summary":{"requests":10,"finished":9}}}`, FormatVersion)
	f.Add("sweep-abc", []byte(ok))
	f.Add("capacity-abc", []byte(fmt.Sprintf(`{"schema_version":%d,"key":"capacity-abc","unit":{"points":[{"summary":{"requests":3,"finished":3}}]}}`, FormatVersion)))
	f.Add("sweep-abc", []byte(`{"schema_version":1,"key":"sweep-abc","key":"x","unit":{}}`))
	f.Add("sweep-abc", []byte(ok+` trailing`))
	f.Add("sweep-abc", []byte(`{"unit":{"summary":{"requests":-1,"finished":2}}}`))
	f.Add("x", []byte(`[]`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		u, err := ParsePointFile(key, b)
		if err != nil {
			return
		}
		if len(u) == 0 || u[0] != '{' || !json.Valid(u) {
			t.Fatalf("accepted a unit that is not a JSON object: %q", u)
		}
		kind, _, _ := cutKind(key)
		if err := checkSummaries(kind, u); err != nil {
			t.Fatalf("accepted a unit whose summaries fail: %v", err)
		}
	})
}

// The fuzz target's seeds: the well-formed file is accepted, so the
// target's checks run; the others are refused.
func TestParsePointFileSeeds(t *testing.T) {
	ok := fmt.Sprintf(`{"schema_version":%d,"key":"sweep-abc","unit":{"rate":1,"summary":{"requests":10,"finished":9}}}`, FormatVersion)
	if _, err := ParsePointFile("sweep-abc", []byte(ok)); err != nil {
		t.Fatalf("well-formed point file: %v", err)
	}
	for _, bad := range []string{ok + ` trailing`, `{"schema_version":2,"key":"sweep-abc","key":"x","unit":{}}`, `[]`,
		fmt.Sprintf(`{"schema_version":%d,"key":"sweep-abd","unit":{"summary":{"requests":1,"finished":1}}}`, FormatVersion)} {
		if _, err := ParsePointFile("sweep-abc", []byte(bad)); err == nil {
			t.Errorf("ParsePointFile(%q) accepted", bad)
		}
	}
}
