package wandb

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// W&B reads a sweep config with PyYAML (YAML 1.1) and hands each value to the trainer as Python's str()
// of it. These helpers reproduce both, so that a W&B config planned by rlsweep gives the argv W&B's agent
// would run: `1e-5` (no dot, so a string in YAML 1.1) stays "1e-5", `0.10` becomes "0.1", `yes` becomes
// "True", `1.0` stays "1.0".

// PyYAML's implicit resolvers for plain scalars (yaml/resolver.py), in its order: bool, float, int, null.
var (
	pyBoolRe  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	pyFloatRe = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	pyIntRe   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	pyNullRe  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// None is YAML's null as PyYAML reads it (Python's None).
type None struct{}

// Scalar reads a scalar node as PyYAML's safe_load would: int64, float64, bool, string or None. ok
// is false for a value PyYAML would read as something else (a timestamp, binary) or cannot read.
func Scalar(n *yaml.Node) (v any, ok bool) {
	text := n.Value
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.ShortTag()
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return text, true
	default:
		switch {
		case pyBoolRe.MatchString(text):
			tag = "!!bool"
		case pyFloatRe.MatchString(text):
			tag = "!!float"
		case pyIntRe.MatchString(text):
			tag = "!!int"
		case pyNullRe.MatchString(text):
			tag = "!!null"
		default:
			return text, true
		}
	}
	switch tag {
	case "!!str":
		return text, true
	case "!!null":
		return None{}, true
	case "!!bool":
		switch strings.ToLower(text) {
		case "yes", "true", "on":
			return true, true
		case "no", "false", "off":
			return false, true
		}
	case "!!int":
		return pyInt(text)
	case "!!float":
		return pyFloat(text)
	}
	return nil, false
}

// pyInt is PyYAML's construct_yaml_int: underscores dropped, 0b binary, 0x hex, a leading 0 octal,
// base-60 with colons.
func pyInt(text string) (any, bool) {
	s := strings.ReplaceAll(text, "_", "")
	sign := int64(1)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	var n int64
	var err error
	switch {
	case s == "0":
		return int64(0), true
	case strings.HasPrefix(s, "0b"):
		n, err = strconv.ParseInt(s[2:], 2, 64)
	case strings.HasPrefix(s, "0x"):
		n, err = strconv.ParseInt(s[2:], 16, 64)
	case strings.HasPrefix(s, "0"):
		n, err = strconv.ParseInt(s[1:], 8, 64)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, e := strconv.ParseInt(part, 10, 64)
			if e != nil {
				return nil, false
			}
			n = n*60 + d
		}
	default:
		n, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil {
		return nil, false
	}
	return sign * n, true
}

// pyFloat is PyYAML's construct_yaml_float.
func pyFloat(text string) (any, bool) {
	s := strings.ToLower(strings.ReplaceAll(text, "_", ""))
	sign := 1.0
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1), true
	case s == ".nan":
		return math.NaN(), true
	case strings.Contains(s, ":"):
		f := 0.0
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, false
			}
			f = f*60 + d
		}
		return sign * f, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return sign * f, true
}

// Str is Python's str() of a value: what W&B's agent writes after "--name=".
func Str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return pyFloatRepr(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case None, nil:
		return "None"
	case pyDict:
		return x.repr()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// pyRepr is Python's repr(): strings quoted, everything else as str().
func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		return pyStrRepr(s)
	}
	return Str(v)
}

// pyFloatRepr is Python's repr() of a float: the shortest digits that read back, in fixed notation for
// decimal exponents from -4 to 15 (with ".0" when integral), else as 1e-05 or 1.5e+16.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX: the shortest digits
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e // Go writes the exponent with a sign and at least two digits, as Python does
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// pyStrRepr is Python's repr() of a str.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyDict is a Python dict in insertion order: a nested W&B parameter's value.
type pyDict struct {
	keys []string
	vals []any
}

func (d pyDict) repr() string { return d.format(pyStrRepr, pyRepr) }

// format writes the dict as Python writes one, "{k: v, …}", each key by key and each value by val.
func (d pyDict) format(key func(string) string, val func(any) string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range d.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(key(k))
		b.WriteString(": ")
		b.WriteString(val(d.vals[i]))
	}
	b.WriteByte('}')
	return b.String()
}

// JSON is Python's json.dumps() with its defaults: ", " and ": " separators, ASCII only, floats as
// repr() (NaN, Infinity).
func JSON(v any) string {
	switch x := v.(type) {
	case string:
		return pyJSONString(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return pyFloatRepr(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case None, nil:
		return "null"
	case pyDict:
		return x.format(pyJSONString, JSON)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = JSON(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return Str(v)
}

func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x80 && r <= 0xffff):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r > 0xffff:
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// Tree reads a node and everything under it as PyYAML does: a list as []any, a mapping as a dict in the
// file's order. ok is false for what Scalar refuses, a non-finite float or a key that is not a scalar.
func Tree(n *yaml.Node) (any, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		x, ok := Scalar(n)
		if f, isFloat := x.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, false
		}
		return x, ok
	case yaml.SequenceNode:
		out := []any{}
		for _, c := range n.Content {
			x, ok := Tree(c)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case yaml.MappingNode:
		var out pyDict
		for i := 0; i+1 < len(n.Content); i += 2 {
			x, ok := Tree(n.Content[i+1])
			if !ok || n.Content[i].Kind != yaml.ScalarNode {
				return nil, false
			}
			out.keys, out.vals = append(out.keys, n.Content[i].Value), append(out.vals, x)
		}
		return out, true
	}
	return nil, false
}

// YAML11Hint rewrites a number such as 1e-5 the way YAML 1.1 reads it as a float: 1.0e-5.
func YAML11Hint(s string) string {
	mant, exp, ok := strings.Cut(strings.ToLower(s), "e")
	if !ok {
		return s
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if exp != "" && exp[0] != '-' && exp[0] != '+' {
		exp = "+" + exp
	}
	return mant + "e" + exp
}
