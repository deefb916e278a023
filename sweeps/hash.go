package sweeps

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Hash is the SHA-256 of the spec's canonical JSON encoding, in hex: equal for specs that plan and run
// the same, whatever their YAML formatting, comments or key order. Regression runs pin a sweep by it;
// the regression thresholds judge a run without changing it, so they are left out.
func (s *Spec) Hash() string {
	c := *s
	c.Regression = nil
	b, err := json.Marshal(&c)
	if err != nil {
		// Only NaN or ±Inf in a hand-built Spec can fail to encode; hash what identifies it instead.
		b = []byte(s.Name + "\x00invalid")
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
