package html

import (
	"testing"

	"github.com/itlsim/itlsim/sim"
)

// TestCauseColors: every stall cause has its own colour, and none is the
// chunk dots' near-black, so a stall's segments can be told apart.
func TestCauseColors(t *testing.T) {
	seen := map[string]string{}
	for _, c := range sim.Causes() {
		col, ok := causeColors[c.String()]
		if !ok {
			t.Errorf("cause %s has no colour", c)
			continue
		}
		if col == chunkColor {
			t.Errorf("cause %s is drawn in the chunks' colour %s", c, col)
		}
		if other, dup := seen[col]; dup {
			t.Errorf("causes %s and %s share colour %s", other, c, col)
		}
		seen[col] = c.String()
	}
}
