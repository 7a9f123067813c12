package workloads

import (
	"io"
	"time"
)

// azureReader reads Azure's LLM inference traces (Azure/AzurePublicDataset,
// AzureLLMInferenceTrace_*.csv; Splitwise, ISCA'24):
//
//	TIMESTAMP,ContextTokens,GeneratedTokens
//	2023-11-16 18:15:46.6805900,374,44
//
// TIMESTAMP is a wall-clock time: the 2023 files write it without a zone
// and with 7 fractional digits, the 2024 files with a "+00:00" offset and
// 6; both forms are read with or without a fraction. A time without a zone
// is taken as UTC. The arrival is the time since the earliest row.
// ContextTokens and GeneratedTokens are positive token counts.
type azureReader struct {
	t            *csvFile
	ts, ctx, gen column
}

func newAzure(r io.Reader, name string, _ bool) (recordReader, error) {
	a := &azureReader{
		ts:  column{name: "TIMESTAMP", required: true},
		ctx: column{name: "ContextTokens", required: true},
		gen: column{name: "GeneratedTokens", required: true},
	}
	t, err := newCSV(r, name, []*column{&a.ts, &a.ctx, &a.gen})
	if err != nil {
		return nil, err
	}
	a.t = t
	return a, nil
}

func (a *azureReader) next(r *Request) (bool, error) {
	ok, err := a.t.read()
	if !ok || err != nil {
		return false, err
	}
	*r = Request{}
	s := a.t.field(&a.ts)
	if r.Arrival, ok = parseAzureTime(s); !ok {
		return false, a.t.errorf(&a.ts, "expected a time like %q or %q, got %s",
			"2023-11-16 18:15:46.6805900", "2024-05-10 00:00:00.009930+00:00", quoted(s))
	}
	if r.InputTokens, err = a.t.count(&a.ctx); err != nil {
		return false, err
	}
	if r.OutputTokens, err = a.t.count(&a.gen); err != nil {
		return false, err
	}
	return true, nil
}

// parseAzureTime reads "YYYY-MM-DD HH:MM:SS[.F][ZONE]" (a 'T' may replace
// the space; F has 1 to 9 digits, more are truncated to the nanosecond;
// ZONE is Z, ±HH:MM or ±HHMM) into ns since the Unix epoch. It checks every
// field's range, so "2023-02-30" is an error rather than March 2nd.
func parseAzureTime(s string) (int64, bool) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1900 || year > 2200 || month < 1 || month > 12 ||
		day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	rest := s[19:]
	var nanos int64
	if len(rest) > 0 && rest[0] == '.' {
		i, digits := 1, 0
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			if digits < 9 {
				nanos = nanos*10 + int64(rest[i]-'0')
				digits++
			}
		}
		if i == 1 {
			return 0, false
		}
		for ; digits < 9; digits++ {
			nanos *= 10
		}
		rest = rest[i:]
	}
	var offset int // seconds east of UTC
	switch {
	case rest == "" || rest == "Z":
	case rest[0] == '+' || rest[0] == '-':
		z := rest[1:]
		if len(z) == 5 && z[2] == ':' {
			z = z[:2] + z[3:]
		}
		if len(z) != 4 {
			return 0, false
		}
		h := int(z[0]-'0')*10 + int(z[1]-'0')
		m := int(z[2]-'0')*10 + int(z[3]-'0')
		for _, c := range []byte(z) {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		if h > 23 || m > 59 {
			return 0, false
		}
		offset = (h*60 + m) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return (t.Unix()-int64(offset))*1e9 + nanos, true
}

// daysIn returns the number of days of a month of the Gregorian calendar.
func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// vidurReader reads the processed request traces of Vidur and Splitwise
// (microsoft/vidur data/processed_traces/*.csv with arrivals):
//
//	arrived_at,num_prefill_tokens,num_decode_tokens[,...]
//	0.0,3772,54
//
// arrived_at is the arrival in seconds (a decimal, read exactly to the
// nanosecond); the counts are positive integers (integral decimals such as
// "74.0", as pandas writes them, count). Other columns are ignored.
type vidurReader struct {
	t             *csvFile
	at, pre, deco column
}

func newVidur(r io.Reader, name string, _ bool) (recordReader, error) {
	v := &vidurReader{
		at:   column{name: "arrived_at", required: true},
		pre:  column{name: ColumnInput, required: true},
		deco: column{name: ColumnOutput, required: true},
	}
	t, err := newCSV(r, name, []*column{&v.at, &v.pre, &v.deco})
	if err != nil {
		return nil, err
	}
	v.t = t
	return v, nil
}

func (v *vidurReader) next(r *Request) (bool, error) {
	ok, err := v.t.read()
	if !ok || err != nil {
		return false, err
	}
	*r = Request{}
	if r.Arrival, err = v.t.seconds(&v.at); err != nil {
		return false, err
	}
	if r.InputTokens, err = v.t.count(&v.pre); err != nil {
		return false, err
	}
	if r.OutputTokens, err = v.t.count(&v.deco); err != nil {
		return false, err
	}
	return true, nil
}

// seconds reads a time in seconds ≥ 0 into ns.
func (t *csvFile) seconds(c *column) (int64, error) {
	s := trimSpace(t.field(c))
	ns, ok := parseTimeUnits([]byte(s), 9)
	if !ok {
		return 0, t.errorf(c, "expected seconds in [0, %g], got %s", float64(maxHorizonS), quoted(s))
	}
	return ns, nil
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
