package metrics

import (
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
