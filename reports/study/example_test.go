package study_test

import (
	"fmt"

	"github.com/itlsim/itlsim/reports/study"
)

// Map runs independent items on several workers; the results come back in
// input order whatever the interleaving.
func ExampleMap() {
	squares, err := study.Map(5, 3, func(i int) (int, error) { return i * i, nil }, nil)
	fmt.Println(squares, err)
	// Output: [0 1 4 9 16] <nil>
}

// ParseRates reads the --rate of a sweep: a range with a step or a list.
func ExampleParseRates() {
	r, _ := study.ParseRates("4:20:4")
	fmt.Println(r)
	r, _ = study.ParseRates("2.5,10,40")
	fmt.Println(r)
	// Output:
	// [4 8 12 16 20]
	// [2.5 10 40]
}

// Shard splits a study's units among the pods of an Indexed Job.
func ExampleShard() {
	for i := range 3 {
		fmt.Println(i, study.Shard(8, i, 3))
	}
	// Output:
	// 0 [0 3 6]
	// 1 [1 4 7]
	// 2 [2 5]
}
