package metrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Keys of a JSON line with a meaning of their own; every other numeric key is a metric.
const (
	keyStep       = "step"
	keyCheckpoint = "checkpoint"
)

// ParseJSONLine parses one metrics record: a JSON object with a required integer "step" ≥ 0 (a number
// with an integral value such as 1e6 or 2048.0 is accepted), an optional "checkpoint" string, and any
// number of other keys. Every other numeric value is kept in Record.Values under its key; booleans,
// nulls, strings, objects and arrays are ignored. The bare tokens NaN, Infinity and -Infinity that
// Python's json module writes are accepted as numbers (as values only; inside a string they are text).
// When a key repeats, the last value wins.
//
// The parser is a small hand-written scanner: it allocates the Values map and its keys, nothing else
// for a line without escapes.
func ParseJSONLine(line []byte) (Record, error) {
	p := lineParser{b: line}
	return p.record()
}

// lineParser scans one JSON object. intern, when not nil, maps key bytes to a shared string so a
// tail reading millions of records with the same keys allocates each key once.
type lineParser struct {
	b      []byte
	i      int
	intern map[string]string
}

// maxInterned bounds the intern table: a trainer that writes a fresh key per record must not grow it
// without limit.
const maxInterned = 4096

var errNoStep = errors.New(`step: got no "step" key, want an integer ≥ 0`)

func (p *lineParser) record() (Record, error) {
	var rec Record
	p.skipSpace()
	if !p.eat('{') {
		return rec, p.syntaxErr("a JSON object")
	}
	hasStep := false
	p.skipSpace()
	if !p.eat('}') {
		for {
			if err := p.member(&rec, &hasStep); err != nil {
				return Record{}, err
			}
			p.skipSpace()
			if p.eat(',') {
				p.skipSpace()
				continue
			}
			if p.eat('}') {
				break
			}
			return Record{}, p.syntaxErr(`"," or "}"`)
		}
	}
	p.skipSpace()
	if p.i != len(p.b) {
		return Record{}, p.syntaxErr("the end of the line")
	}
	if !hasStep {
		return Record{}, errNoStep
	}
	return rec, nil
}

// member parses `"key": value` and stores what it means into rec.
func (p *lineParser) member(rec *Record, hasStep *bool) error {
	raw, escaped, err := p.stringToken()
	if err != nil {
		return err
	}
	p.skipSpace()
	if !p.eat(':') {
		return p.syntaxErr(`":"`)
	}
	p.skipSpace()
	if p.i >= len(p.b) {
		return p.syntaxErr("a value")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		sraw, sesc, err := p.stringToken()
		if err != nil {
			return err
		}
		if keyIs(raw, escaped, keyCheckpoint) {
			rec.Checkpoint = unescape(sraw, sesc)
		}
		return nil
	case c == '{' || c == '[':
		return p.skipComposite()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	start := p.i
	v, integral, err := p.number()
	if err != nil {
		return err
	}
	if keyIs(raw, escaped, keyStep) {
		step, err := stepValue(p.b[start:p.i], v, integral)
		if err != nil {
			return err
		}
		rec.Step = step
		*hasStep = true
		return nil
	}
	if rec.Values == nil {
		rec.Values = make(map[string]float64, 24)
	}
	if escaped {
		rec.Values[unescape(raw, true)] = v
	} else {
		rec.Values[p.key(raw)] = v
	}
	return nil
}

// keyIs reports whether the raw key token names key.
func keyIs(raw []byte, escaped bool, key string) bool {
	if escaped {
		return unescape(raw, true) == key
	}
	return string(raw) == key
}

// key returns raw as a string, shared through the intern table when there is one.
func (p *lineParser) key(raw []byte) string {
	if p.intern == nil {
		return string(raw)
	}
	if s, ok := p.intern[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if len(p.intern) < maxInterned {
		p.intern[s] = s
	}
	return s
}

// stepValue validates the "step" token: an integer ≥ 0, or a float with an integral value.
func stepValue(tok []byte, v float64, integral bool) (int64, error) {
	if integral {
		n, err := strconv.ParseInt(string(tok), 10, 64)
		if err == nil && n >= 0 {
			return n, nil
		}
	} else if v >= 0 && v == math.Trunc(v) && v < math.MaxInt64 {
		return int64(v), nil
	}
	return 0, fmt.Errorf("step: got %s, want an integer ≥ 0", tok)
}

func (p *lineParser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *lineParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *lineParser) literal(word string) error {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return nil
	}
	return p.syntaxErr(strconv.Quote(word))
}

// stringToken scans a JSON string starting at the opening quote and returns its raw contents (quotes
// removed, escapes not yet decoded) and whether it holds escapes.
func (p *lineParser) stringToken() (raw []byte, escaped bool, err error) {
	if !p.eat('"') {
		return nil, false, p.syntaxErr("a string")
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw = p.b[start:p.i]
			p.i++
			return raw, escaped, nil
		case c == '\\':
			if err := p.escape(); err != nil {
				return nil, false, err
			}
			escaped = true
			continue
		case c < 0x20:
			return nil, false, p.syntaxErr("no control character inside a string")
		}
		p.i++
	}
	return nil, false, p.syntaxErr(`a closing '"'`)
}

// escape validates one escape sequence at p.i (the backslash) and steps over it.
func (p *lineParser) escape() error {
	if p.i+1 >= len(p.b) {
		return p.syntaxErr("an escape sequence")
	}
	switch p.b[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return nil
	case 'u':
		if p.i+6 > len(p.b) {
			return p.syntaxErr("four hex digits after \\u")
		}
		for _, h := range p.b[p.i+2 : p.i+6] {
			if hexVal(h) < 0 {
				return p.syntaxErr("four hex digits after \\u")
			}
		}
		p.i += 6
		return nil
	}
	return p.syntaxErr("a valid escape sequence")
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescape decodes the contents of a string token already validated by stringToken.
func unescape(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			out = append(out, raw[i])
			i++
			continue
		}
		c := raw[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(raw[i:]))
			i += 4
			if utf16.IsSurrogate(r) && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if r2 := utf16.DecodeRune(r, rune(hex4(raw[i+2:]))); r2 != utf8.RuneError {
					r = r2
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
	}
	return string(out)
}

func hex4(b []byte) int {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// skipComposite steps over an object or array without interpreting it; strings are scanned so that a
// bracket inside one does not count.
func (p *lineParser) skipComposite() error {
	depth := 0
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		case '"':
			if _, _, err := p.stringToken(); err != nil {
				return err
			}
			continue
		}
		p.i++
	}
	return p.syntaxErr("the end of a nested object or array")
}

// number scans a JSON number or one of Python's NaN, Infinity, -Infinity. integral reports whether the
// token has neither fraction nor exponent.
func (p *lineParser) number() (v float64, integral bool, err error) {
	start := p.i
	neg := p.eat('-')
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case 'N':
			if !neg {
				if err := p.literal("NaN"); err != nil {
					return 0, false, err
				}
				return math.NaN(), false, nil
			}
		case 'I':
			if err := p.literal("Infinity"); err != nil {
				return 0, false, err
			}
			if neg {
				return math.Inf(-1), false, nil
			}
			return math.Inf(1), false, nil
		}
	}
	if !p.digits(true) {
		p.i = start
		return 0, false, p.syntaxErr("a value")
	}
	integral = true
	if p.eat('.') {
		integral = false
		if !p.digits(false) {
			return 0, false, p.syntaxErr("digits after '.'")
		}
	}
	if p.eat('e') || p.eat('E') {
		integral = false
		if !p.eat('+') {
			p.eat('-')
		}
		if !p.digits(false) {
			return 0, false, p.syntaxErr("digits in the exponent")
		}
	}
	v, err = strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false, p.syntaxErr("a number")
	}
	// Out of range: ParseFloat already returned ±Inf or ±0, which is what the trainer meant.
	return v, integral, nil
}

// digits scans a run of decimal digits; integerPart forbids a leading zero followed by more digits.
func (p *lineParser) digits(integerPart bool) bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - start
	if n == 0 {
		return false
	}
	return !integerPart || n == 1 || p.b[start] != '0'
}

// syntaxErr reports what was found at the current offset and what was wanted there.
func (p *lineParser) syntaxErr(want string) error {
	got := "the end of the line"
	if p.i < len(p.b) {
		end := min(p.i+16, len(p.b))
		got = strconv.Quote(string(p.b[p.i:end]))
	}
	return fmt.Errorf("offset %d: got %s, want %s", p.i, got, want)
}
