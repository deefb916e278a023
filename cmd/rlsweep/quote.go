package main

import (
	"strconv"
	"strings"
)

// quotedList renders allowed values for a message as "a", "b", "c" (never Go's ["a" "b" "c"]).
func quotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
