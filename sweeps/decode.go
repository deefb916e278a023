package sweeps

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rlsweep/rlsweep/sweeps/wandb"
	"gopkg.in/yaml.v3"
)

// MaxSpecBytes is the largest sweep spec Decode and Load accept. Specs are written by hand; anything
// larger is a mistake (a data file passed by accident) and is refused before parsing.
const MaxSpecBytes = 1 << 20

// Decode reads a sweep spec in YAML from r, strictly: unknown keys, duplicate keys, wrong types, anchors
// and aliases are errors. filename is used in messages only. Defaults are applied (see docs/spec.md) and
// the position of every field is kept so that Validate can name the line of each problem.
//
// Decode does not validate values; call Validate, or use Load which does both. Invalid input is reported
// as Errors, every problem at once.
func Decode(r io.Reader, filename string) (*Spec, error) {
	data, err := readLimited(r, filename)
	if err != nil {
		return nil, err
	}
	s, errs := decode(data, filename)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// Load opens the spec at path, decodes and validates it, and reports every problem of both steps at once.
func Load(path string) (*Spec, error) {
	s, _, err := LoadSource(path)
	return s, err
}

// LoadSource is Load that also returns the bytes it read: a caller that stores or sends the spec as
// written (rlsweep submit's spec.yaml) keeps the very bytes it validated, without reading the file again.
func LoadSource(path string) (*Spec, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load sweep spec: %w", err)
	}
	defer f.Close()
	data, err := readLimited(f, path)
	if err != nil {
		return nil, nil, err
	}
	s, errs := decode(data, path)
	if s == nil {
		return nil, nil, errs
	}
	errs = append(errs, s.validate()...)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, nil, errs
	}
	return s, data, nil
}

// readLimited reads at most MaxSpecBytes, failing fast on anything larger.
func readLimited(r io.Reader, filename string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read sweep spec %s: %w", filename, err)
	}
	if len(data) > MaxSpecBytes {
		return nil, Errors{{File: filename, Line: 1, Field: "file",
			Got: fmt.Sprintf("more than %d bytes", MaxSpecBytes), Want: "a sweep spec of at most 1 MiB"}}
	}
	return data, nil
}

// yamlLine finds the line number in a yaml.v3 error message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// decode parses data into a Spec. It returns a nil Spec when the document cannot be read at all, and a
// Spec with the problems found otherwise (the caller decides whether to use it).
func decode(data []byte, filename string) (*Spec, Errors) {
	d := &decoder{file: filename, lines: map[string]int{}, bad: map[string]bool{}}
	if len(bytes.TrimSpace(data)) == 0 {
		d.errs = append(d.errs, &FieldError{File: filename, Line: 1, Field: "file",
			Got: "an empty file", Want: "a sweep spec (a YAML mapping with at least name, trainer)"})
		return nil, d.errs
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		d.errs = append(d.errs, &FieldError{File: filename, Line: 1, Field: "file",
			Got: "only comments", Want: "a sweep spec (a YAML mapping with at least name, trainer)"})
		return nil, d.errs
	} else if err != nil {
		d.errs = append(d.errs, syntaxError(filename, data, err))
		return nil, d.errs
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errs = append(d.errs, &FieldError{File: filename, Line: extra.Line, Field: "file",
			Got: "a second YAML document", Want: "exactly one document (no --- separators)"})
		return nil, d.errs
	} else if !errors.Is(err, io.EOF) {
		d.errs = append(d.errs, syntaxError(filename, data, err))
		return nil, d.errs
	}
	if len(doc.Content) == 0 {
		d.errs = append(d.errs, &FieldError{File: filename, Line: 1, Field: "file",
			Got: "no YAML content", Want: "a sweep spec (a YAML mapping with at least name, trainer)"})
		return nil, d.errs
	}
	root := doc.Content[0]
	if root.Kind == yaml.MappingNode && wandb.IsConfig(root) {
		// W&B reads its configs with PyYAML, which resolves anchors, aliases and << merges: so does rlsweep
		// for them, within a bound on the expanded size.
		root = d.expandAliases(root)
	}
	if d.rejectAliases(root); len(d.errs) > 0 {
		return nil, d.errs
	}
	if root.Kind != yaml.MappingNode {
		d.errs = append(d.errs, &FieldError{File: filename, Line: root.Line, Field: "file",
			Got: describe(root), Want: "a mapping with keys name, trainer, parameters, ..."})
		return nil, d.errs
	}
	s := defaults()
	d.lines[""] = root.Line
	if wandb.IsConfig(root) {
		d.wandb(root, s, filename)
	} else {
		d.spec(root, s)
	}
	applyLateDefaults(s)
	s.file, s.lines, s.bad = filename, d.lines, d.bad
	sortErrors(d.errs)
	return s, d.errs
}

// syntaxError turns a yaml.v3 parse error into a FieldError with the line it names. yaml.v3 counts the
// lines of its parser's errors (as opposed to its scanner's) from 0 where it names one: those get 1
// added. A line with ${ inside a flow sequence or mapping gets a hint: YAML reads { there as the start
// of a mapping, so ${...} must be quoted.
func syntaxError(filename string, data []byte, err error) *FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			line = n
		}
		msg = strings.TrimSpace(yamlLine.ReplaceAllString(msg, ""))
		msg = strings.TrimPrefix(msg, ": ")
		if yamlParserError(msg) {
			line++
		}
	}
	fe := &FieldError{File: filename, Line: line, Field: "yaml", Got: quote(msg), Want: "valid YAML"}
	if n, ref := flowDollar(data, line, msg); n > 0 {
		fe.Line = n
		fe.Want += fmt.Sprintf("; ${...} inside [...] or {...} must be quoted (YAML reads { there as the start of a mapping): write %q", ref)
	}
	return fe
}

// flowDollar finds, for an error inside a flow sequence or mapping that starts on line, the first ${...}
// of that flow (on line or the more indented lines after it): its line and text; 0 when there is none.
func flowDollar(data []byte, line int, msg string) (int, string) {
	if !strings.Contains(msg, "',' or ']'") && !strings.Contains(msg, "',' or '}'") {
		return 0, ""
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return 0, ""
	}
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	base := indent(lines[line-1])
	for i := line - 1; i < len(lines); i++ {
		text := lines[i]
		if i > line-1 && strings.TrimSpace(text) != "" && indent(text) <= base {
			break
		}
		if j := strings.Index(text, "${"); j >= 0 {
			ref := text[j:]
			if k := strings.IndexByte(ref, '}'); k >= 0 {
				ref = ref[:k+1]
			}
			return i + 1, ref
		}
	}
	return 0, ""
}

// yamlParserErrors are the messages of yaml.v3's parser (not its scanner), whose line it gives 0-based.
var yamlParserErrors = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"found undefined tag handle", "did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
}

func yamlParserError(msg string) bool {
	for _, m := range yamlParserErrors {
		if msg == m {
			return true
		}
	}
	return false
}

// decoder walks the YAML node tree, collecting problems and field positions.
type decoder struct {
	file  string
	errs  Errors
	lines map[string]int
	bad   map[string]bool // fields that failed to decode; Validate stays quiet about them
}

func (d *decoder) fail(n *yaml.Node, path, got, want string) {
	d.bad[path] = true
	d.errs = append(d.errs, &FieldError{File: d.file, Line: n.Line, Field: path, Got: got, Want: want})
}

// rejectAliases reports every anchor and alias: they are rarely needed in a sweep spec and make
// positions ambiguous; refusing them also rules out alias-expansion bombs.
func (d *decoder) rejectAliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: n.Line, Field: "yaml",
			Got: "alias *" + n.Value, Want: "plain YAML (anchors and aliases are not supported)"})
		return
	}
	if n.Anchor != "" {
		d.errs = append(d.errs, &FieldError{File: d.file, Line: n.Line, Field: "yaml",
			Got: "anchor &" + n.Anchor, Want: "plain YAML (anchors and aliases are not supported)"})
	}
	for _, c := range n.Content {
		d.rejectAliases(c)
	}
}

// describe renders a node as the "got" part of a message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return quote(n.Value)
		}
		return n.Value
	}
	return "nothing"
}

// field is one known key of a mapping and how to decode its value.
type field struct {
	key string
	set func(path string, v *yaml.Node)
}

// each calls fn for every key of a mapping node, reporting non-mappings, non-string and duplicate keys.
func (d *decoder) each(n *yaml.Node, path, want string, fn func(key, path string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, describe(n), want)
		return
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			d.fail(k, join(path, "?"), describe(k)+" as a key", "a plain name as a key")
			continue
		}
		p := join(path, k.Value)
		if line, dup := first[k.Value]; dup {
			d.fail(k, p, fmt.Sprintf("a second definition (the first is on line %d)", line), "each key once")
			continue
		}
		first[k.Value] = k.Line
		d.lines[p] = k.Line
		fn(k.Value, p, k, v)
	}
}

// mapping decodes a mapping with a fixed set of keys.
func (d *decoder) mapping(n *yaml.Node, path string, fields []field) {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	want := "a mapping with keys " + strings.Join(keys, ", ")
	d.each(n, path, want, func(key, p string, k, v *yaml.Node) {
		for _, f := range fields {
			if f.key == key {
				f.set(p, v)
				return
			}
		}
		want, guess := unknownKeyWant(path, key, keys)
		d.fail(k, p, unknownKey, want)
		if guess != "" {
			d.bad[join(path, guess)] = true // a typo, not also a missing key
		}
	})
}

// unknownKeyWant lists the allowed keys, with a suggestion for a likely typo (returned as guess) or a
// W&B key.
func unknownKeyWant(path, key string, keys []string) (want, guess string) {
	want = "one of " + strings.Join(keys, ", ")
	if hint, ok := wandb.Hints[key]; ok && path == "" {
		return want + "; W&B's " + key + " is " + hint + " here", ""
	}
	bestDist := 3
	for _, k := range keys {
		if dist := EditDistance(key, k); dist < bestDist {
			guess, bestDist = k, dist
		}
	}
	if guess != "" {
		want += " (did you mean " + guess + "?)"
	}
	return want, guess
}

// EditDistance is the Levenshtein distance between a and b in bytes, for "did you mean" hints on short
// keys: 64 for a string longer than 64 bytes, which no hint is that far from.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// join appends a key to a dotted field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Scalars.

func (d *decoder) scalar(v *yaml.Node, path, want string) bool {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		d.fail(v, path, describe(v), want)
		return false
	}
	return true
}

func (d *decoder) text(dst *string) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if d.scalar(v, path, "a string") {
			*dst = v.Value
		}
	}
}

func (d *decoder) bigInt(dst *int64) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if n, ok := d.integer(v, path); ok {
			*dst = n
		}
	}
}

func (d *decoder) smallInt(dst *int) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		n, ok := d.integer(v, path)
		if !ok {
			return
		}
		if n > math.MaxInt32 || n < math.MinInt32 {
			d.fail(v, path, v.Value, "an integer of at most 9 digits")
			return
		}
		*dst = int(n)
	}
}

// integer accepts YAML integers and integral floats written in exponent form (5e5, common in RL configs).
func (d *decoder) integer(v *yaml.Node, path string) (int64, bool) {
	const want = "an integer"
	if !d.scalar(v, path, want) {
		return 0, false
	}
	switch v.ShortTag() {
	case "!!int":
		var n int64
		if err := v.Decode(&n); err != nil {
			d.fail(v, path, v.Value, "an integer in the int64 range")
			return 0, false
		}
		return n, true
	case "!!float":
		var f float64
		if err := v.Decode(&f); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	d.fail(v, path, describe(v), want)
	return 0, false
}

func (d *decoder) number(v *yaml.Node, path string) (float64, bool) {
	const want = "a finite number"
	if !d.scalar(v, path, want) {
		return 0, false
	}
	switch v.ShortTag() {
	case "!!int", "!!float":
		var f float64
		if err := v.Decode(&f); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	d.fail(v, path, describe(v), want)
	return 0, false
}

func (d *decoder) float(dst *float64) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if f, ok := d.number(v, path); ok {
			*dst = f
		}
	}
}

func (d *decoder) floatPtr(dst **float64) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if f, ok := d.number(v, path); ok {
			*dst = &f
		}
	}
}

func (d *decoder) flag(dst *bool) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if !d.scalar(v, path, "true or false") {
			return
		}
		if v.ShortTag() != "!!bool" {
			d.fail(v, path, describe(v), "true or false")
			return
		}
		_ = v.Decode(dst) // the tag says it is a bool
	}
}

func (d *decoder) duration(dst *time.Duration) func(string, *yaml.Node) {
	const want = "a duration such as 90s, 10m or 1h30m"
	return func(path string, v *yaml.Node) {
		if !d.scalar(v, path, want) {
			return
		}
		dur, err := time.ParseDuration(v.Value)
		if err != nil || v.ShortTag() != "!!str" {
			d.fail(v, path, describe(v), want)
			return
		}
		*dst = dur
	}
}

// value decodes a parameter value: a scalar number, string or bool.
func (d *decoder) value(v *yaml.Node, path string) (any, bool) {
	const want = "a number, string or bool"
	if !d.scalar(v, path, want) {
		return nil, false
	}
	switch v.ShortTag() {
	case "!!int":
		var n int64
		if err := v.Decode(&n); err == nil {
			return n, true
		}
		d.fail(v, path, v.Value, "an integer in the int64 range")
		return nil, false
	case "!!float":
		f, ok := d.number(v, path)
		return f, ok
	case "!!bool":
		var b bool
		_ = v.Decode(&b)
		return b, true
	case "!!str":
		return v.Value, true
	}
	d.fail(v, path, describe(v), want)
	return nil, false
}

func (d *decoder) list(v *yaml.Node, path, want string, fn func(i int, path string, e *yaml.Node)) {
	if v.Kind != yaml.SequenceNode {
		d.fail(v, path, describe(v), want)
		return
	}
	for i, e := range v.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = e.Line
		fn(i, p, e)
	}
}

func (d *decoder) textList(dst *[]string) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		out := []string{}
		d.list(v, path, "a list of strings", func(_ int, p string, e *yaml.Node) {
			if d.scalar(e, p, "a string") {
				out = append(out, e.Value)
			}
		})
		*dst = out
	}
}

func (d *decoder) textMap(dst *map[string]string) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		out := map[string]string{}
		d.each(v, path, "a mapping of names to strings", func(key, p string, _, e *yaml.Node) {
			if d.scalar(e, p, "a string") {
				out[key] = e.Value
			}
		})
		*dst = out
	}
}
