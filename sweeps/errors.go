package sweeps

import (
	"fmt"
	"sort"
	"strings"
)

// FieldError is one problem with a sweep spec: where it is, which field, the value given and what is
// allowed. It formats as "file:line: field: got VALUE, want ALLOWED"; File and Line are left out when
// unknown (a Spec built in code rather than decoded).
type FieldError struct {
	File  string // the spec's file name as given to Decode or Load
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path: "parameters.lr.min", "trainer.command[2]"
	Got   string // the offending value, quoted where it is a string
	Want  string // what is allowed
}

// Error implements error.
func (e *FieldError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	fmt.Fprintf(&b, "%s: got %s, want %s", e.Field, e.Got, e.Want)
	return b.String()
}

// Errors is every problem found in a sweep spec: unknown keys first (the likely cause of the rest), then
// the others in file order. Decode, Validate, Load and Plan return it
// (as a value, never wrapped) for invalid input, so callers tell bad input from other failures with
//
//	var errs sweeps.Errors
//	if errors.As(err, &errs) { /* invalid spec: exit 2, print errs one per line */ }
//
// errors.As with a *FieldError target finds the first problem.
type Errors []*FieldError

// Error implements error: one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so errors.As finds a *FieldError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders problems by line, keeping the order they were found in within a line, except that
// unknown keys come first: a misspelt key (parametres:) is the cause of the problems its absence brings
// (no parameters, a template naming none), so it is the first thing to fix.
func sortErrors(es Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		if ui, uj := es[i].Got == unknownKey, es[j].Got == unknownKey; ui != uj {
			return ui
		}
		return es[i].Line < es[j].Line
	})
}

// unknownKey is the Got of the problem with a key the spec does not know.
const unknownKey = "an unknown key"

// quote renders a user-given string for a message.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}
