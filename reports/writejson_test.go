package reports

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/itlsim/itlsim/sim"
	"github.com/itlsim/itlsim/workloads"
)

// WriteJSON streams each run's rows from its result, and writes exactly
// the bytes an indenting encoding/json Encoder writes for the document with
// its rows built: runs with streams, with none, rejected rows, names that
// need escaping, and a run whose rows were built (read from a file).
func TestWriteJSONIsTheEncodersBytes(t *testing.T) {
	mk := func(name string, requests int, blocks int) Run {
		e, err := sim.New(queueingConfig(requests, blocks))
		if err != nil {
			t.Fatal(err)
		}
		r := e.Run()
		return NewRunOptions(name, nil, e.Setup().Config, r, false)
	}
	runs := []Run{mk(`a "quoted" <name> & "streams": []`, 60, 0), mk("rejections", 80, 40), {Name: "none", Overrides: map[string]string{}, Streams: []StreamRow{}}}
	if runs[1].Summary.Rejected == 0 {
		t.Fatal("the scenario should reject requests")
	}
	built := mk("built", 20, 0)
	built.Streams = StreamRows(built.src)
	runs = append(runs, built)
	doc := Document{SchemaVersion: SchemaVersion, Scenario: runs[0].Config, Runs: runs}

	var got bytes.Buffer
	defer func(c int) { rowChunk = c }(rowChunk)
	rowChunk = 9 // more rows than a chunk: formatted in chunks where there are cores
	if err := WriteJSON(&got, doc); err != nil {
		t.Fatal(err)
	}
	want := doc
	want.Runs = append([]Run(nil), runs...)
	for i := range want.Runs {
		if want.Runs[i].src != nil && len(want.Runs[i].Streams) == 0 {
			want.Runs[i].Streams = StreamRows(want.Runs[i].src)
		}
	}
	var exp bytes.Buffer
	enc := json.NewEncoder(&exp)
	enc.SetIndent("", "  ")
	if err := enc.Encode(want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), exp.Bytes()) {
		t.Fatalf("streamed JSON (%d bytes) differs from the encoder's (%d bytes)", got.Len(), exp.Len())
	}
	if !bytes.Contains(got.Bytes(), []byte(`"status": "rejected"`)) {
		t.Error("no rejected row in the document")
	}
}

// queueingConfig is the default scenario with requests short outputs at
// 40 req/s, a cache of blocks GPU blocks (0: the default) and a queue of
// three, so that some requests are rejected.
func queueingConfig(requests, blocks int) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Workload.Requests = requests
	cfg.Workload.Rate = 40
	cfg.Workload.OutputLen = workloads.MustParseDist("uniform:1,40")
	cfg.KVCache.NumGPUBlocks = blocks
	cfg.Scheduler.Admission.Rule = "max-queue"
	cfg.Scheduler.Admission.MaxQueue = 3
	return cfg
}

// TestRowsInChunksAreTheSameBytes: the JSON document and the streams CSV
// are the same bytes whether rows are formatted one after another or in
// chunks on several goroutines (formatRows), for chunks of one row, of a
// few, and of more rows than the run has; and rows come in id order when
// ids are not 0..n-1 (the sort's path) as when they are.
func TestRowsInChunksAreTheSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e, err := sim.New(queueingConfig(300, 60))
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run()
	// The same streams with ids that skip and start at 7: sorted, not placed.
	sparse := *res
	sparse.Streams = sim.Summaries{}
	for _, st := range res.Streams.All() {
		c := *st
		c.ID = 7 + 3*st.ID
		sparse.Streams.Append(c)
	}
	runs := []Run{NewRunOptions("a", nil, e.Setup().Config, res, false), NewRunOptions("b,\"sparse\"", nil, e.Setup().Config, &sparse, false)}
	doc := Document{SchemaVersion: SchemaVersion, Scenario: runs[0].Config, Runs: runs}
	write := func(chunk int) (string, string) {
		defer func(c int) { rowChunk = c }(rowChunk)
		rowChunk = chunk
		var j, c bytes.Buffer
		if err := WriteJSON(&j, doc); err != nil {
			t.Fatal(err)
		}
		if err := WriteStreamsCSV(&c, runs); err != nil {
			t.Fatal(err)
		}
		return j.String(), c.String()
	}
	wantJSON, wantCSV := write(1 << 30) // one goroutine, row after row
	for _, chunk := range []int{1, 7, 64} {
		if j, c := write(chunk); j != wantJSON || c != wantCSV {
			t.Errorf("rows in chunks of %d: JSON same %v, CSV same %v", chunk, j == wantJSON, c == wantCSV)
		}
	}
	var ids []int
	_ = runs[1].EachStream(func(row *StreamRow) error { ids = append(ids, row.ID); return nil })
	if len(ids) != res.Streams.Len() || !slices.IsSorted(ids) || ids[0] != 7 {
		t.Errorf("sparse ids come as %v..., want %d ids in order from 7", ids[:min(5, len(ids))], res.Streams.Len())
	}
	if !strings.Contains(wantCSV, "rejected") {
		t.Error("no rejected row: the scenario should reject requests")
	}
}
