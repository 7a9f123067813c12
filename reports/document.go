package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/itlsim/itlsim/sim"
)

// Document is the JSON written by `itlsim run --json`: the scenario and
// one entry per compared configuration.
type Document struct {
	// SchemaVersion is SchemaVersion: what the keys below mean.
	SchemaVersion int `json:"schema_version"`
	// Scenario is the resolved configuration of the first run, every default filled in.
	Scenario sim.Config `json:"scenario"`
	Runs     []Run      `json:"runs"`
}

// Run is one configuration's results.
type Run struct {
	Name string `json:"name"`
	// Overrides are the fields this run sets on top of the scenario (the
	// compared values), as path → value.
	Overrides map[string]string `json:"overrides"`
	Config    sim.Config        `json:"config"`
	// Summary is what the clients saw; with a delivery path configured,
	// SummaryServer is the same figures for the streams as the server
	// emitted them (absent otherwise: the two are equal).
	Summary       Summary  `json:"summary"`
	SummaryServer *Summary `json:"summary_server,omitempty"`
	// Classes summarizes each traffic class with the same definitions
	// (absent when the workload has no classes).
	Classes       map[string]*Summary `json:"classes,omitempty"`
	Streams       []StreamRow         `json:"streams"`
	Timeseries    []Point             `json:"timeseries"`
	ITLByPosition []PositionRow       `json:"itl_by_position"`
	WorstStreams  []WorstStream       `json:"worst_streams"`
	// Source is set on runs read from measured files (`itlsim analyze`).
	Source *Source `json:"source,omitempty"`
	// Replicas and Cluster describe a run of several replicas (absent for
	// one): each replica's share and the router's (see AddCluster).
	Replicas []ReplicaRun `json:"replicas,omitempty"`
	// src is the result the run was built from: writers stream its rows
	// (EachStream) instead of holding Streams.
	src     *sim.Result
	Cluster *ClusterRun `json:"cluster,omitempty"`
	// Pools describe each pool of a cluster with prefill and decode pools
	// (absent otherwise): its role and the summary of its streams (see
	// AddPools).
	Pools []PoolRun `json:"pools,omitempty"`
	// SLO holds the run's SLO terms judged (--slo, a scenario's slo:);
	// SLOPass is whether all passed (both absent without terms).
	SLO     []SLOOutcome `json:"slo,omitempty"`
	SLOPass *bool        `json:"slo_pass,omitempty"`
	// VLLM is the summary under the keys of `vllm bench serve` results.
	VLLM VLLM `json:"vllm"`
	// Realtime says how closely a live run (itlsim serve) kept its
	// schedule; absent for a simulation run offline.
	Realtime *Realtime `json:"realtime,omitempty"`
}

// Realtime is how late a live server released its chunks against their
// scheduled wall times (wall seconds): the latencies its clients recorded
// are inflated by about that much.
type Realtime struct {
	TimeScale float64 `json:"time_scale"`
	// Events are the chunk releases measured.
	Events          int     `json:"events"`
	ScheduleLagP50S float64 `json:"schedule_lag_p50_s"`
	ScheduleLagP99S float64 `json:"schedule_lag_p99_s"`
	ScheduleLagMaxS float64 `json:"schedule_lag_max_s"`
	// MaxScheduleLagS is the p99 the run was held to (--max-schedule-lag).
	MaxScheduleLagS float64 `json:"max_schedule_lag_s"`
	// Held: p99 within MaxScheduleLagS and the schedule never fell behind.
	Held bool `json:"held"`
	// Notes are the lag's line and its warnings, as printed under the table.
	Notes []string `json:"notes"`
}

// UnmarshalJSON decodes a document and links what the JSON carries beside
// each run's summary (summary_server, classes) back into Summary.Server and
// Summary.ByClass, where the tables read them: a run read from a --json
// file renders as the run itself did. (On the document, not the run, so
// that a decoding error's offset stays the file's.)
func (d *Document) UnmarshalJSON(data []byte) error {
	type plain Document // no methods: no recursion
	if err := json.Unmarshal(data, (*plain)(d)); err != nil {
		return err
	}
	for i := range d.Runs {
		r := &d.Runs[i]
		r.Summary.Server, r.Summary.ByClass = r.SummaryServer, r.Classes
	}
	return nil
}

// StreamRow is one request's summary (finished or rejected), times in ms.
type StreamRow struct {
	ID           int      `json:"id"`
	Status       string   `json:"status"`
	RejectReason string   `json:"reject_reason,omitempty"`
	ArrivalS     float64  `json:"arrival_s"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	TTFTMS       float64  `json:"ttft_ms"`
	TPOTMS       float64  `json:"tpot_ms"`
	E2ELMS       float64  `json:"e2el_ms"`
	Chunks       int      `json:"chunks"`
	ITLMeanMS    float64  `json:"itl_mean_ms"`
	ITLP50MS     float64  `json:"itl_p50_ms"`
	ITLP90MS     float64  `json:"itl_p90_ms"`
	ITLP99MS     float64  `json:"itl_p99_ms"`
	MaxGapMS     float64  `json:"max_gap_ms"`
	JitterRatio  float64  `json:"jitter_ratio"`
	Stalls       int      `json:"stalls"`
	StallMS      float64  `json:"stall_ms"`
	StallCauses  []string `json:"stall_causes"`
	Preemptions  int      `json:"preemptions"`
	// Class is the request's traffic class ("" without classes).
	Class string `json:"class,omitempty"`
	// QoE, Fluidity and FluidRate are the stream's perceived scores
	// (absent when not scored: rejected, or no chunk times).
	QoE       *float64 `json:"qoe,omitempty"`
	Fluidity  *float64 `json:"fluidity,omitempty"`
	FluidRate *float64 `json:"fluid_tokens_per_s,omitempty"`
}

// Point is one time-series bucket. Gauges are time-weighted means over the
// bucket; ITL percentiles cover the gaps that ended in it.
type Point struct {
	TS                 float64 `json:"t_s"`
	Running            float64 `json:"running"`
	Waiting            float64 `json:"waiting"`
	Preempted          float64 `json:"preempted"`
	KVUtilization      float64 `json:"kv_utilization"`
	BatchTokensPerStep float64 `json:"batch_tokens_per_step"`
	Steps              int     `json:"steps"`
	Preemptions        int     `json:"preemptions"`
	Finished           int     `json:"finished"`
	OutputTokensPerS   float64 `json:"output_tokens_per_s"`
	ITLCount           uint64  `json:"itl_count"`
	ITLP50MS           float64 `json:"itl_p50_ms"`
	ITLP95MS           float64 `json:"itl_p95_ms"`
	ITLP99MS           float64 `json:"itl_p99_ms"`
}

// PositionRow holds ITL percentiles for the gaps after chunk From..To of a
// response (To = 0: and beyond).
type PositionRow struct {
	From     int     `json:"from"`
	To       int     `json:"to"`
	Count    uint64  `json:"count"`
	ITLP50MS float64 `json:"itl_p50_ms"`
	ITLP90MS float64 `json:"itl_p90_ms"`
	ITLP95MS float64 `json:"itl_p95_ms"`
	ITLP99MS float64 `json:"itl_p99_ms"`
	// The per-token view: each chunk's gap divided among its tokens
	// (equal to the above without speculative decoding).
	PerTokenMeanMS float64 `json:"itl_per_token_mean_ms"`
	PerTokenP50MS  float64 `json:"itl_per_token_p50_ms"`
	PerTokenP99MS  float64 `json:"itl_per_token_p99_ms"`
}

// NewRun builds a run's JSON view from its configuration and result.
func NewRun(name string, overrides map[string]string, cfg sim.Config, r *sim.Result) Run {
	return NewRunOptions(name, overrides, cfg, r, true)
}

// NewRunOptions is NewRun that leaves Streams empty unless withStreams:
// a million-request run's per-stream rows are only built when a file or
// stdout needs them. The run keeps r (its writers stream r's rows, its
// summaries draw a population from r when asked for a percentile they do
// not show): r must not change afterwards.
func NewRunOptions(name string, overrides map[string]string, cfg sim.Config, r *sim.Result, withStreams bool) Run {
	if overrides == nil {
		overrides = map[string]string{}
	}
	run := Run{
		Name:          name,
		Overrides:     overrides,
		Config:        cfg,
		Summary:       SummarizeWith(r, cfg.Metrics, Options{ClassSLO: ClassSLOs(r, cfg), FromResult: true}),
		Streams:       []StreamRow{},
		Timeseries:    Timeseries(r),
		ITLByPosition: ITLByPosition(r),
		WorstStreams:  WorstStreams(r),
	}
	run.VLLM = vllmBlock(&run.Summary, r.Pooled)
	run.Summary.ByClass = classSummaries(r, cfg, true)
	run.Classes = run.Summary.ByClass
	run.src = r
	if withStreams {
		run.Streams = StreamRows(r)
	}
	return run
}

// EachStream calls fn with each of the run's rows in order: Streams when
// they were built (or read from a file), else the rows of the result the
// run was made from, one at a time (EachStreamRow).
func (r *Run) EachStream(fn func(*StreamRow) error) error {
	if r.src != nil && len(r.Streams) == 0 {
		return EachStreamRow(r.src, fn)
	}
	for i := range r.Streams {
		if err := fn(&r.Streams[i]); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes doc as indented JSON, byte for byte what an
// encoding/json Encoder with SetIndent("", "  ") writes, but with each
// run's streams written row by row as EachStream yields them: a
// million-request document is never held in memory, only one row of it.
func WriteJSON(w io.Writer, doc Document) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	// The document with every run's streams empty; each "streams": [] is
	// then filled in as it is written.
	d := doc
	d.Runs = slices.Clone(doc.Runs)
	for i := range d.Runs {
		d.Runs[i].Streams = []StreamRow{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	b := buf.Bytes()
	// A run's keys sit at an indent of 6; no string can hold the newline
	// and quotes of this key, so its i-th match is run i's.
	key := []byte("\n      \"streams\": []")
	const rowIndent = "        "
	for i := range doc.Runs {
		j := bytes.Index(b, key)
		if j < 0 {
			return fmt.Errorf("reports: run %d has no streams key in its JSON", i)
		}
		bw.Write(b[:j+len(key)-2]) // through `"streams": `
		b = b[j+len(key):]
		n, err := doc.Runs[i].formatRows(func(dst []byte, i int, row *StreamRow) ([]byte, error) {
			if i == 0 {
				dst = append(dst, "[\n"+rowIndent...)
			} else {
				dst = append(dst, ",\n"+rowIndent...)
			}
			return appendRowJSON(dst, row, rowIndent)
		}, func(b []byte) error {
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			bw.WriteString("[]")
		} else {
			bw.WriteString("\n      ]")
		}
	}
	bw.Write(b)
	return bw.Flush()
}

// AddServerView attaches the server-side summary of a run whose Summary is
// the client view (a delivery path was configured).
func (r *Run) AddServerView(server *sim.Result) {
	s := Summarize(server, r.Config.Metrics)
	r.SummaryServer = &s
	r.Summary.Server = &s
}

// StreamRows lists every request's summary ordered by request id.
func StreamRows(r *sim.Result) []StreamRow {
	rows := make([]StreamRow, 0, r.Streams.Len())
	_ = EachStreamRow(r, func(row *StreamRow) error {
		c := *row
		c.StallCauses = append([]string{}, row.StallCauses...) // the row's buffer is reused
		rows = append(rows, c)
		return nil
	})
	return rows
}

// EachStreamRow calls fn with every request's row in StreamRows's order
// (by request id), building one row at a time: writers stream a million
// requests' rows without holding them. The row is valid only during the
// call.
func EachStreamRow(r *sim.Result, fn func(*StreamRow) error) error {
	causes := []string{} // reused row to row
	var row StreamRow
	for _, k := range streamOrder(r) {
		streamRow(r, int(k), &row, causes)
		if err := fn(&row); err != nil {
			return err
		}
		causes = row.StallCauses
	}
	return nil
}

// Timeseries converts the result's buckets; the last bucket's gauges are
// averaged over the part of it the run covered.
func Timeseries(r *sim.Result) []Point {
	iv := r.Series.Interval
	pts := make([]Point, len(r.Series.Buckets))
	for i := range r.Series.Buckets {
		b := &r.Series.Buckets[i]
		width := float64(iv)
		if end := b.Start + iv; end > r.Duration && r.Duration > b.Start {
			width = float64(r.Duration - b.Start)
		}
		p := Point{
			TS:               b.Start.Seconds(),
			Running:          b.RunningNS / width,
			Waiting:          b.WaitingNS / width,
			Preempted:        b.PreemptedNS / width,
			KVUtilization:    b.KVUsedNS / width,
			Steps:            b.Steps,
			Preemptions:      b.Preemptions,
			Finished:         b.Finished,
			OutputTokensPerS: float64(b.OutputTokens) / (width / 1e9),
		}
		if b.ITL != nil { // nil: a cluster replica's, whose ITL over time is the cluster's
			p.ITLCount = b.ITL.N
		}
		if b.Steps > 0 {
			p.BatchTokensPerStep = float64(b.BatchTokens) / float64(b.Steps)
		}
		if p.ITLCount > 0 {
			p.ITLP50MS, p.ITLP95MS, p.ITLP99MS = ms(b.ITL.Quantile(0.5)), ms(b.ITL.Quantile(0.95)), ms(b.ITL.Quantile(0.99))
		}
		pts[i] = p
	}
	return pts
}

// ITLByPosition lists ITL percentiles by the gap's position in the
// response, in power-of-two ranges, skipping empty ranges.
func ITLByPosition(r *sim.Result) []PositionRow {
	var rows []PositionRow
	for i, h := range r.Position {
		if h.N == 0 {
			continue
		}
		row := PositionRow{From: 1 << i, To: 1<<(i+1) - 1, Count: h.N,
			ITLP50MS: ms(h.Quantile(0.5)), ITLP90MS: ms(h.Quantile(0.9)), ITLP95MS: ms(h.Quantile(0.95)), ITLP99MS: ms(h.Quantile(0.99))}
		if pt := r.PositionPerToken[i]; pt != nil && pt.N > 0 {
			row.PerTokenMeanMS, row.PerTokenP50MS, row.PerTokenP99MS = ms(pt.Mean()), ms(pt.Quantile(0.5)), ms(pt.Quantile(0.99))
		}
		if i == sim.PositionBuckets-1 {
			row.To = 0
		}
		rows = append(rows, row)
	}
	if rows == nil {
		rows = []PositionRow{}
	}
	return rows
}

// SLOOutcome is one SLO term judged on a run (package reports/slo makes
// them): the term as written, the run's value and the limit in the term's
// unit (ms for times, tokens/s for speeds, a fraction for shares and
// scores, a ratio for jitter), whether it passed, and the margin (limit −
// value for an upper limit, value − limit for a lower one: negative when
// it failed). Value and Margin are nil when the run's value is undefined
// (an empty population), and the term fails.
type SLOOutcome struct {
	Term   string   `json:"term"`
	Unit   string   `json:"unit"`
	Value  *float64 `json:"value"`
	Limit  float64  `json:"limit"`
	Pass   bool     `json:"pass"`
	Margin *float64 `json:"margin"`
	// Note says why a value is undefined.
	Note string `json:"note,omitempty"`
}

// CheckSchema refuses a results document of another schema_version, read
// from path: its keys may mean something else (SchemaVersion says what
// changes).
func CheckSchema(path string, v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("%s: no schema_version: not an itlsim --json result (this itlsim writes and reads schema %d)", path, SchemaVersion)
	case v != SchemaVersion:
		return fmt.Errorf("%s: schema_version %d: this itlsim reads schema %d; rerun the command that wrote it with this itlsim", path, v, SchemaVersion)
	}
	return nil
}
