package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// AppendRecordJSON appends rec to dst as one JSON line, the way Python's json module writes it: keys
// sorted after "step", non-finite numbers as the bare tokens NaN, Infinity and -Infinity, and the
// checkpoint, if any, last. ParseJSONLine reads it back exactly.
func AppendRecordJSON(dst []byte, rec Record) []byte {
	dst = append(dst, `{"step":`...)
	dst = strconv.AppendInt(dst, rec.Step, 10)
	keys := make([]string, 0, len(rec.Values))
	for k := range rec.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst = append(dst, ',')
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = AppendFloatJSON(dst, rec.Values[k])
	}
	if rec.Checkpoint != "" {
		dst = append(dst, `,"checkpoint":`...)
		dst = appendJSONString(dst, rec.Checkpoint)
	}
	return append(dst, '}', '\n')
}

// AppendFloatJSON appends x as a JSON number in its shortest exact form, or as NaN, Infinity or
// -Infinity.
func AppendFloatJSON(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(dst, "NaN"...)
	case math.IsInf(x, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(x, -1):
		return append(dst, "-Infinity"...)
	}
	return strconv.AppendFloat(dst, x, 'g', -1, 64)
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// LineStep reads a stored line's step without decoding the record: an integer ≥ 0 (a number with an
// integral value such as 2048.0 included). Canonical lines (AppendRecordJSON) begin with it and are
// read in place; any other JSON object is decoded. It is the step function the artifact store merges
// a trial's metrics parts by (artifacts.ReadMetrics).
func LineStep(line []byte) (int64, bool) {
	const canon = `{"step":`
	if rest, ok := bytes.CutPrefix(line, []byte(canon)); ok {
		n, i := int64(0), 0
		for ; i < len(rest) && i < 18 && rest[i] >= '0' && rest[i] <= '9'; i++ {
			n = n*10 + int64(rest[i]-'0')
		}
		if i > 0 && i < len(rest) && (rest[i] == ',' || rest[i] == '}') && (i == 1 || rest[0] != '0') {
			return n, true
		}
	}
	var v struct {
		Step json.RawMessage `json:"step"`
	}
	if json.Unmarshal(line, &v) != nil || len(v.Step) == 0 {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(v.Step), 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		return n, true
	}
	f, err := strconv.ParseFloat(string(v.Step), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}
