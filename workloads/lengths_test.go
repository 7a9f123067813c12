package workloads

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vidurTrace is Vidur's arXiv-summarization length trace, reached from the
// package directory; tests that need it skip where shared/data is absent.
const vidurTrace = "../../shared/data/traces/vidur_arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"

func TestReadLengthsVidur(t *testing.T) {
	if _, err := os.Stat(vidurTrace); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s absent", vidurTrace)
	}
	l, err := ReadLengths(vidurTrace)
	if err != nil {
		t.Fatalf("ReadLengths: %v", err)
	}
	// The figures below are those of the published file (see
	// shared/data/README.md): 28,257 pairs of long prompts.
	if l.Len() != 28257 {
		t.Errorf("Len() = %d, want 28257", l.Len())
	}
	if in, out := l.At(0); in != 3772 || out != 54 {
		t.Errorf("At(0) = %d, %d, want 3772, 54 (the first data row)", in, out)
	}
	if in, out := l.Max(); in != 4054 || out != 4056 {
		t.Errorf("Max() = %d, %d, want 4054, 4056", in, out)
	}
	if total := l.MaxTotal(); total > 4096 {
		t.Errorf("MaxTotal() = %d, want ≤ 4096 (the trace is filtered to Llama-2's context)", total)
	}
	if in, out := l.Mean(); math.Abs(in-2588) > 1 || math.Abs(out-291) > 1 {
		t.Errorf("Mean() = %.1f, %.1f, want about 2588, 291", in, out)
	}

	c := DefaultConfig()
	c.LengthsFile = vidurTrace
	c.Requests = 20_000
	var sumIn float64
	reqs := Collect(mustNew(t, c, 3), 0)
	for _, r := range reqs {
		sumIn += float64(r.InputTokens)
	}
	// Sampling with replacement keeps the file's mean prompt (sd 945, so
	// the standard error over 20,000 draws is under 7 tokens).
	if mean := sumIn / float64(len(reqs)); math.Abs(mean-2588) > 30 {
		t.Errorf("mean sampled prompt %.1f, want about 2588", mean)
	}
}

func TestReadLengthsErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // the error after "FILE:"
	}{
		{"empty.csv", "", "1: empty file, expected a header with columns num_prefill_tokens,num_decode_tokens"},
		{"no_prefill.csv", "num_decode_tokens,x\n1,2\n", "1: missing column num_prefill_tokens"},
		{"no_decode.csv", "num_prefill_tokens\n1\n", "1: missing column num_decode_tokens"},
		{"dup.csv", "num_prefill_tokens,num_decode_tokens,num_prefill_tokens\n1,2,3\n", "1: duplicate column num_prefill_tokens"},
		{"header_only.csv", "num_prefill_tokens,num_decode_tokens\n", "1: no data rows after the header"},
		{"abc.csv", "num_prefill_tokens,num_decode_tokens\n1,2\n3,abc\n",
			`3: num_decode_tokens: expected a positive integer, got "abc"`},
		{"zero.csv", "num_prefill_tokens,num_decode_tokens\n0,2\n",
			`2: num_prefill_tokens: expected a positive integer ≤ 2147483647, got "0"`},
		{"negative.csv", "num_decode_tokens,num_prefill_tokens\n-4,2\n",
			`2: num_decode_tokens: expected a positive integer ≤ 2147483647, got "-4"`},
		{"fraction.csv", "num_prefill_tokens,num_decode_tokens\n1.5,2\n",
			`2: num_prefill_tokens: expected a positive integer, got "1.5"`},
		{"huge.csv", "num_prefill_tokens,num_decode_tokens\n1,99999999999\n",
			`2: num_decode_tokens: expected a positive integer ≤ 2147483647, got "99999999999"`},
		{"short_row.csv", "num_prefill_tokens,num_decode_tokens,pd_ratio\n1,2,0.5\n\n3,4\n",
			"4: expected 3 fields as in the header, got 2"},
		{"quote.csv", "num_prefill_tokens,num_decode_tokens\n1,\"2\n", "2: malformed CSV: extraneous or missing \" in quoted-field"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLengths(path)
		if want := path + ":" + tt.want; err == nil || err.Error() != want {
			t.Errorf("%s: error = %v, want %s", tt.name, err, want)
		}
	}
}

func TestParseLengthsTolerates(t *testing.T) {
	// A byte-order mark, CRLF line ends, spaces, integral decimals as
	// pandas writes them, extra columns in any order, no final newline.
	const content = "\ufeffnum_decode_tokens , other, num_prefill_tokens\r\n 7 ,x,100.0\r\n8,\"y,z\",200"
	l, err := ParseLengths(strings.NewReader(content), "t.csv")
	if err != nil {
		t.Fatalf("ParseLengths: %v", err)
	}
	if l.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", l.Len())
	}
	for i, want := range [][2]int{{100, 7}, {200, 8}} {
		if in, out := l.At(i); in != want[0] || out != want[1] {
			t.Errorf("At(%d) = %d, %d, want %d, %d", i, in, out, want[0], want[1])
		}
	}
}

func FuzzParseLengths(f *testing.F) {
	f.Add([]byte("num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n74,918,992,0.08\n290,905,1195,0.32\n"))
	f.Add([]byte("num_prefill_tokens,num_decode_tokens\n1,abc\n"))
	f.Add([]byte("num_decode_tokens,num_prefill_tokens\r\n1e3,2.0\r\n"))
	f.Add([]byte("a,\"b\nc\",num_prefill_tokens,num_decode_tokens\n1,2,3,4\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLengths(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		if l.Len() == 0 {
			t.Fatal("no error but no pairs")
		}
		for i := range l.Len() {
			if in, out := l.At(i); in < 1 || out < 1 {
				t.Fatalf("pair %d = %d, %d, want positive", i, in, out)
			}
		}
	})
}
