package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Fuzz targets for every parser of user input. `go test` runs their seed
// corpora; run one for longer with, e.g.,
//
//	go test ./workloads -run '^$' -fuzz FuzzMooncake -fuzztime 1m

// checkRequests holds what every reader promises of the requests it accepts.
func checkRequests(t *testing.T, reqs []Request, relative bool) {
	t.Helper()
	for i, r := range reqs {
		if r.InputTokens < 1 || r.OutputTokens < 1 || r.InputTokens > MaxLength || r.OutputTokens > MaxLength {
			t.Fatalf("request %d: lengths %d, %d", i, r.InputTokens, r.OutputTokens)
		}
		if relative && (r.Arrival < 0 || r.Arrival > maxTraceNs) {
			t.Fatalf("request %d: arrival %d ns", i, r.Arrival)
		}
		if (len(r.PrefixBlocks) > 0) != (r.PrefixBlockTokens > 0) {
			t.Fatalf("request %d: %d prefix ids of %d tokens", i, len(r.PrefixBlocks), r.PrefixBlockTokens)
		}
	}
}

// fuzzReader feeds data to one format's reader: it must never panic, and
// an error must name the file.
func fuzzReader(t *testing.T, data []byte, name, format string, relative bool) {
	reqs, err := ReadRequests(bytes.NewReader(data), name, format)
	if err != nil {
		if !strings.HasPrefix(err.Error(), name+":") {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	checkRequests(t, reqs, relative)
}

func FuzzAzure(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2024-05-10 00:00:00.009930+00:00,4808,10\r\n2024-05-10 00:00:01+00:00,1,1\r\n"))
	f.Add([]byte("GeneratedTokens,TIMESTAMP,ContextTokens\n1,2023-02-29 00:00:00,1\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023-11-16 18:15:46\",\"1\",1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, "fuzz.csv", FormatAzure, false) })
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}` + "\n" +
		`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}`))
	f.Add([]byte(`{"hash_ids": null, "timestamp": 1.5e3, "input_length": 1e2, "output_length": 2.0, "x": [{"a": "\u00e9\ud83d\ude00"}]}`))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551615]}` + "\r\n\r\n"))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551616]}`))
	f.Add([]byte(`{"timestamp":0,"input_length":1,"output_length":1,"timestamp":-0}`))
	f.Add([]byte("{\"a\": \"\\x\"}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, "fuzz.jsonl", FormatMooncake, true) })
}

func FuzzVidur(f *testing.F) {
	f.Add([]byte("arrived_at,num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n0.0,3772,54,3826,69.8\n0.123456789123,2015,156,2171,12.9\n"))
	f.Add([]byte("num_decode_tokens,arrived_at,num_prefill_tokens\n1,1e3,2.0\n"))
	f.Add([]byte("arrived_at,num_prefill_tokens,num_decode_tokens\n-1,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, "fuzz.csv", FormatVidur, true) })
}

func FuzzItlsimJSONL(f *testing.F) {
	f.Add([]byte(`{"arrival_s":0.000000000,"input_tokens":512,"output_tokens":128}` + "\n" +
		`{"arrival_s":0.250000000,"input_tokens":900,"output_tokens":64,"class":"rag","priority":1,"prefix_blocks":[7,8],"prefix_block_tokens":512}`))
	f.Add([]byte(`{"arrival_s":1,"input_tokens":1,"output_tokens":1,"class":null,"prefix_blocks":[],"prefix_block_tokens":16}`))
	f.Add([]byte(`{"arrival_s":1,"input_tokens":1,"output_tokens":1,"prefix_blocks":[1]}`))
	f.Add([]byte(`{"arrival_s":1,"input_tokens":1,"output_tokens":1,"priority":99999999999}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, "fuzz.jsonl", FormatItlsim, true) })
}

func FuzzItlsimCSV(f *testing.F) {
	f.Add([]byte("arrival_s,input_tokens,output_tokens,class,priority,prefix_blocks,prefix_block_tokens\n0.000000000,512,128,,0,,\n0.250000000,900,64,rag,1,7 8,512\n"))
	f.Add([]byte("input_tokens,arrival_s,output_tokens\n1,2,3\n"))
	f.Add([]byte("arrival_s,input_tokens,output_tokens,prefix_blocks\n0,1,1,1 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, "fuzz.csv", FormatItlsim, true) })
}

// FuzzItlsimRoundTrip: whatever requests are written in itlsim's format,
// JSON lines or CSV, read back the same.
func FuzzItlsimRoundTrip(f *testing.F) {
	f.Add(int64(0), 1, 1, "", 0, uint64(0), 0)
	f.Add(int64(123456789012), 4096, 2, "rag, \"long\"\n", -3, uint64(1<<63), 16)
	f.Add(int64(99999999999999999), 2147483647, 7, "\xff\x00é", 2147483647, uint64(5), 512)
	f.Fuzz(func(t *testing.T, arrival int64, in, out int, class string, prio int, id uint64, blockTokens int) {
		if arrival < 0 || arrival > maxTraceNs || in < 1 || in > MaxLength || out < 1 || out > MaxLength ||
			prio < -1<<31 || prio > 1<<31-1 || blockTokens < 0 || blockTokens > MaxLength {
			t.Skip()
		}
		class = strings.TrimSpace(strings.ToValidUTF8(class, "\uFFFD"))
		r := Request{Arrival: arrival, InputTokens: in, OutputTokens: out, Class: class, Priority: prio}
		if blockTokens > 0 {
			r.PrefixBlocks, r.PrefixBlockTokens = []uint64{id, id / 2}, blockTokens
		}
		for _, name := range []string{"r.jsonl", "r.csv"} {
			if strings.HasSuffix(name, ".csv") && strings.Contains(class, "\r") {
				continue // CSV readers turn a quoted \r\n into \n (RFC 4180 leaves it open)
			}
			var buf bytes.Buffer
			if _, err := WriteRequests(NewRequestWriterFor(&buf, name), &Slice{Requests: []Request{r}}); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRequests(&buf, name, FormatItlsim)
			if err != nil {
				t.Fatalf("%s: reading back %q: %v", name, buf.String(), err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], r) {
				t.Fatalf("%s: wrote %+v, read %+v", name, r, got)
			}
		}
	})
}

func FuzzServeGen(f *testing.F) {
	f.Add("0,1.33,8.6,Weibull,0.375,0.397\n600,0,0,,0,0\n1200,0.15,4.07,Gamma,0.0604,103.65\n",
		`{"0": {"input_tokens": "{224: 0.0003, 225: 0.0008}", "output_tokens": "{40: 0.5, 41: 0.5}"}, "21600": {"input_tokens": "{}", "output_tokens": "{}", "reason_ratio": "{0.0: 1.0}"}}`)
	f.Add("0,1,1,Gamma,1,1", `{"0": {"input_tokens": "{5: 1,}", "output_tokens": "{5: 1e-300}"}}`)
	f.Add("0,1e308,1,Gamma,0.001,1\n", `{"0": {"input_tokens": "{2147483647: 1}", "output_tokens": "{1: 1}"}}`)
	f.Add("", `[]`)
	f.Fuzz(func(t *testing.T, trace, dataset string) {
		m, err := ParseServeGen(strings.NewReader(trace), "f-trace.csv", strings.NewReader(dataset), "f-dataset.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f-trace.csv") && !strings.HasPrefix(err.Error(), "f-dataset.json") {
				t.Fatalf("error %q names neither file", err)
			}
			return
		}
		src := m.Source(1)
		var reqs []Request
		var r Request
		for len(reqs) < 2000 && src.Next(&r) { // a window may hold very many requests
			reqs = append(reqs, r)
		}
		checkRequests(t, reqs, true)
		for i := 1; i < len(reqs); i++ {
			if reqs[i].Arrival < reqs[i-1].Arrival {
				t.Fatalf("request %d arrives before request %d", i, i-1)
			}
		}
	})
}

func FuzzParseAzureTime(f *testing.F) {
	for _, s := range []string{"2023-11-16 18:15:46.6805900", "2024-05-10 00:00:00.009930+00:00", "2024-05-10 00:00:00+00:00",
		"2023-11-16T18:15:46Z", "2023-11-16 18:15:46-07:30", "2023-02-29 00:00:00", "0000-00-00 00:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := parseAzureTime(s)
		if !ok {
			return
		}
		// Whatever it accepts, the standard library reads the same instant
		// from the RFC 3339 form of the same fields.
		s = trimSpace(s)
		iso := s[:10] + "T" + s[11:]
		if i := strings.IndexAny(iso[19:], "+-Z"); i < 0 {
			iso += "Z"
		} else if z := iso[19+i:]; len(z) == 5 {
			iso = iso[:19+i] + z[:3] + ":" + z[3:]
		}
		if dot := strings.IndexByte(iso, '.'); dot > 0 { // time.Parse takes at most 9 digits
			end := dot + 1
			for end < len(iso) && iso[end] >= '0' && iso[end] <= '9' {
				end++
			}
			if end-dot-1 > 9 {
				iso = iso[:dot+10] + iso[end:]
			}
		}
		want, err := time.Parse(time.RFC3339Nano, iso)
		if err != nil {
			t.Fatalf("parseAzureTime(%q) accepted what time.Parse(%q) rejects: %v", s, iso, err)
		}
		if want.UnixNano() != ns {
			t.Fatalf("parseAzureTime(%q) = %d, time.Parse gives %d", s, ns, want.UnixNano())
		}
	})
}

// FuzzJSONScanner holds the scanner to encoding/json: it accepts a line
// exactly when it is one valid JSON object, with the same members.
func FuzzJSONScanner(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0], "b": {"c": null}, "d": "x\"y\u00e9"} `,
		`{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":"\ud800"}`, `{"\u0074imestamp": 5}`,
		`{"a":[1,]}`, `[1]`, `{"a":1}{}`, "{\"a\":\"\x01\"}", `{"a":"b`, `{"a" 1}`, "{\"a\":1}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var sc jsonScanner
		got := map[string]string{}
		dup := false
		accept := func() bool {
			sc.reset(line)
			if sc.open() != nil {
				return false
			}
			for sc.more() {
				k, err := sc.key()
				if errors.Is(err, errDuplicateKey) {
					dup = true
				}
				if err != nil {
					return false
				}
				key := string(k)
				sc.ws()
				start := sc.i
				if sc.skip() != nil {
					return false
				}
				got[key] = string(line[start:sc.i])
			}
			return sc.end() == nil
		}()
		var m map[string]json.RawMessage
		valid := json.Valid(line) && json.Unmarshal(line, &m) == nil && m != nil
		if dup {
			// encoding/json keeps a duplicate key's last value; the
			// scanner refuses the line at the repeated key, before reading
			// the rest: there are no members to compare.
			return
		}
		if accept != valid {
			t.Fatalf("scanner accepts %q: %v; encoding/json: %v", line, accept, valid)
		}
		if !accept || !utf8.Valid(line) {
			return // encoding/json rewrites invalid UTF-8 in keys
		}
		if len(got) != len(m) {
			t.Fatalf("%q: scanner members %v, encoding/json %v", line, got, m)
		}
		for k, v := range m {
			if got[k] != string(v) {
				t.Fatalf("%q: member %q is %q, encoding/json says %q", line, k, got[k], v)
			}
		}
	})
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"600,1200", "0,", "5,inf", "[1, 2]", "", "2,1", "-1,5", "nan,1", "1e400,1e401"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWindow(s)
		if err != nil {
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("ParseWindow(%q) = %v, invalid: %v", s, w, err)
		}
		again, err := ParseWindow(w.String())
		if err != nil || again != w {
			t.Fatalf("ParseWindow(%q) = %v, whose String %q reads back as %v, %v", s, w, w.String(), again, err)
		}
	})
}

func FuzzParsePMF(f *testing.F) {
	for _, s := range []string{"{224: 0.0003, 225: 0.0008}", "{}", "{1: 1,}", "{1: 0}", "{0: 1}", "{1.5: 1}", "{1: 1e309}", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePMF(s)
		if err != nil || p == nil {
			return
		}
		if len(p.values) == 0 || len(p.values) != len(p.cum) || p.cum[len(p.cum)-1] != 1 {
			t.Fatalf("parsePMF(%q) = %+v", s, p)
		}
		for i := range p.values {
			if p.values[i] < 1 || (i > 0 && (p.values[i] <= p.values[i-1] || p.cum[i] < p.cum[i-1])) {
				t.Fatalf("parsePMF(%q) = %+v: not increasing", s, p)
			}
		}
	})
}
