package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Counts are the numbers of requests that failed and that were rejected.
func (r *Result) Counts() (failed, rejected int) {
	return countOf(r.Failed), countOf(r.Rejected)
}

// Tally is "N requests sent, F failed: reasons[, R rejected: reasons]".
func (r *Result) Tally() string {
	nFailed, nRejected := r.Counts()
	rejected := ""
	if nRejected > 0 {
		rejected = fmt.Sprintf(", %d rejected%s", nRejected, failedList(r.Rejected))
	}
	return fmt.Sprintf("%d requests sent, %d failed%s%s", r.Sent, nFailed, failedList(r.Failed), rejected)
}

func countOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// failedList is ": http 429 ×3, timeout ×1" for the failed requests.
func failedList(f map[string]int) string {
	if len(f) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, f[k]))
	}
	return ": " + strings.Join(parts, ", ")
}
