package artifacts

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanKey checks that key is a relative, slash-separated key that stays inside the store's prefix:
// no empty, "." or ".." segment, no leading slash, no backslash, no control or invisible characters.
// It returns the key unchanged when it is clean.
func CleanKey(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("artifact key: got %q, want a non-empty relative key", key)
	}
	if !utf8.ValidString(key) {
		return "", fmt.Errorf("artifact key: got %q, want valid UTF-8", key)
	}
	for _, r := range key {
		if r == '\\' || !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
			return "", fmt.Errorf("artifact key: got %q, want no backslash, control or invisible characters", key)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("artifact key: got %q, want relative segments without '', '.' or '..'", key)
		}
	}
	return key, nil
}

// Segment turns any string — a sweep name, a trial ID, a parameter value — into one safe key segment:
// ASCII letters, digits, '.', '_' and '-' are kept, everything else becomes '_', and a segment of only
// dots is prefixed, so the result can never be "." or ".." or contain a slash.
func Segment(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 128 {
		out = out[:128]
	}
	// Checked after truncating: a long name whose first 128 bytes are dots must not become all dots.
	if strings.Trim(out, ".") == "" {
		out = "_" + out
		if len(out) > 128 {
			out = out[:128]
		}
	}
	return out
}
