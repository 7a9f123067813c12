package reports

import (
	"bytes"
	"encoding/json"
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
		cfg := sim.DefaultConfig()
		cfg.Workload.Requests = requests
		cfg.Workload.Rate = 40
		cfg.Workload.OutputLen = workloads.MustParseDist("uniform:1,40")
		cfg.KVCache.NumGPUBlocks = blocks
		cfg.Scheduler.Admission.Rule = "max-queue"
		cfg.Scheduler.Admission.MaxQueue = 3
		e, err := sim.New(cfg)
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
