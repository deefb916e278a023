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

// SweepKey is the key of a sweep-level artifact: sweeps/<sweep-id>/<name>. The sweep ID's own slashes
// ("sweep/<name>/<short-id>") become nested folders, each segment made safe.
func SweepKey(sweepID, name string) string {
	return sweepPrefix(sweepID) + "/" + name
}

// TrialKey is the key of a trial artifact: sweeps/<sweep-id>/trials/<trial-id>/<name>.
func TrialKey(sweepID, trialID, name string) string {
	return sweepPrefix(sweepID) + "/trials/" + Segment(trialID) + "/" + name
}

func sweepPrefix(sweepID string) string {
	id := strings.TrimPrefix(sweepID, "sweep/")
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = Segment(p)
	}
	return "sweeps/" + strings.Join(parts, "/")
}

// BaselineKey resolves a baseline reference: a sweep ID ("sweep/<name>/<id>") means that sweep's
// results.json; a bare name means the stored baseline baselines/<name>.json; anything else is a key.
func BaselineKey(ref string) string {
	switch {
	case strings.HasPrefix(ref, "sweep/"):
		return SweepKey(ref, "results.json")
	case !strings.Contains(ref, "/"):
		return StoredBaselineKey(ref)
	}
	return ref
}

// StoredBaselineKey is where `rlsweep baseline set` stores the baseline called name.
func StoredBaselineKey(name string) string { return "baselines/" + Segment(name) + ".json" }
