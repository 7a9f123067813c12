package reports

import (
	"fmt"
	"io"
	"strings"
)

// NoteIdentical says on stderr which compared runs came out identical: the
// setting they differ in made no difference (a smoothing depth without a
// cadence, a limit the load never reaches), which two equal columns would
// otherwise leave the reader to discover.
func NoteIdentical(w io.Writer, runs []Run) {
	same := make([]bool, len(runs))
	for i := range runs {
		if same[i] {
			continue
		}
		var group []string
		for j := i + 1; j < len(runs); j++ {
			if !same[j] && runs[i].Summary.Equal(&runs[j].Summary) {
				same[j] = true
				group = append(group, Printable(runs[j].Name))
			}
		}
		if len(group) > 0 {
			fmt.Fprintf(w, "itlsim: note: runs %s and %s give identical results: what they differ in makes no difference here\n",
				Printable(runs[i].Name), strings.Join(group, ", "))
		}
	}
}
