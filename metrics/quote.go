package metrics

import (
	"strconv"
	"strings"
)

// QuotedList renders allowed values for a message as "a", "b", "c" (never Go's ["a" "b" "c"]).
func QuotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
