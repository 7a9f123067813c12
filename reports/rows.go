package reports

import (
	"cmp"
	"runtime"
	"slices"

	"github.com/itlsim/itlsim/sim"
)

// Stream rows, built one at a time from a result's summaries and written
// by the JSON and CSV writers. A million-request run's rows are never held
// at once; their text is formatted in chunks of rowChunk rows, on every
// core the process has, and written in order: the same bytes as one
// goroutine formatting row after row.

// streamOrder is the order rows are written in: by request id. Ids are
// almost always a permutation of 0..n-1 (a run numbers its requests), then
// placed directly; otherwise sorted, stably.
func streamOrder(r *sim.Result) []int32 {
	n := r.Streams.Len()
	order := make([]int32, n)
	perm := true
	for i := range order {
		order[i] = -1
	}
	for k := 0; k < n && perm; k++ {
		id := r.Streams.At(k).ID
		if perm = id >= 0 && id < n && order[id] < 0; perm {
			order[id] = int32(k)
		}
	}
	if perm {
		return order
	}
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(r.Streams.At(int(a)).ID, r.Streams.At(int(b)).ID) })
	return order
}

// streamRow fills row with summary k's row; causes is a buffer for its
// stall causes, reused row to row (never nil, so an empty list is [] in JSON).
func streamRow(r *sim.Result, k int, row *StreamRow, causes []string) {
	st := r.Streams.At(k)
	*row = StreamRow{
		ID: st.ID, Status: st.Status.String(), ArrivalS: st.Arrival.Seconds(),
		InputTokens: st.InputTokens, OutputTokens: st.OutputTokens,
		Preemptions: st.Preemptions, StallCauses: causes[:0],
	}
	if st.Status == sim.StatusRejected {
		row.RejectReason = st.Reject.String()
	} else {
		t := timesOf(r, k)
		row.TTFTMS, row.TPOTMS, row.E2ELMS = ms(t.ttft), ms(t.tpot), ms(t.e2el)
		row.Chunks = st.Chunks
		row.ITLMeanMS, row.ITLP50MS, row.ITLP90MS, row.ITLP99MS = ms(st.GapMean), ms(st.GapP50), ms(st.GapP90), ms(st.GapP99)
		row.MaxGapMS, row.JitterRatio = ms(t.maxGap), st.Jitter()
		row.Stalls, row.StallMS = st.Stalls, ms(float64(st.StallTime))
		if st.Scored {
			q, f, fr := float64(st.QoE), float64(st.Fluidity), float64(st.FluidRate)
			row.QoE, row.Fluidity, row.FluidRate = &q, &f, &fr
			if st.Chunks < 2 { // one chunk has no rate to keep: the search's ceiling is no figure
				row.FluidRate = nil
			}
		}
		for _, c := range sim.Causes() {
			if st.Causes&(1<<c) != 0 {
				row.StallCauses = append(row.StallCauses, c.String())
			}
		}
	}
	if c := int(st.Class); c >= 0 && c < len(r.ClassNames) {
		row.Class = r.ClassNames[c]
	}
}

// rowChunk is how many rows one chunk of text holds (a variable for tests).
var rowChunk = 1024

// rowFormat appends the text of row, the i-th of the run's rows, to dst.
type rowFormat func(dst []byte, i int, row *StreamRow) ([]byte, error)

// formatRows writes the text of every row of run r, in EachStream's order,
// through write: with more than one core, chunks of rowChunk rows are
// formatted by as many goroutines as cores, at most two chunks each in
// flight, and written in order. It returns how many rows there were.
func (r *Run) formatRows(format rowFormat, write func([]byte) error) (int, error) {
	workers := runtime.GOMAXPROCS(0)
	if r.src == nil || len(r.Streams) != 0 || workers < 2 || r.src.Streams.Len() <= rowChunk {
		var buf []byte
		n := 0
		err := r.EachStream(func(row *StreamRow) error {
			var err error
			if buf, err = format(buf[:0], n, row); err != nil {
				return err
			}
			n++
			return write(buf)
		})
		return n, err
	}
	res := r.src
	order := streamOrder(res)
	chunks := (len(order) + rowChunk - 1) / rowChunk
	type done struct {
		text []byte
		err  error
	}
	// Chunk c is formatted by worker c % workers and handed over on its
	// own channel; a worker formats its next chunk while the writer waits
	// for earlier ones, so at most 2·workers chunks are held.
	outs := make([]chan done, workers)
	for w := range outs {
		outs[w] = make(chan done, 1)
	}
	stop := make(chan struct{})
	defer close(stop)
	free := make(chan []byte, workers)
	for w := range workers {
		go func() {
			var row StreamRow
			causes := []string{}
			for c := w; c < chunks; c += workers {
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				buf = buf[:0]
				var err error
				for i := c * rowChunk; i < min(len(order), (c+1)*rowChunk) && err == nil; i++ {
					streamRow(res, int(order[i]), &row, causes)
					buf, err = format(buf, i, &row)
					causes = row.StallCauses
				}
				select {
				case outs[w] <- done{buf, err}:
				case <-stop:
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	for c := range chunks {
		d := <-outs[c%workers]
		if d.err != nil {
			return 0, d.err
		}
		if err := write(d.text); err != nil {
			return 0, err
		}
		select {
		case free <- d.text:
		default:
		}
	}
	return len(order), nil
}
