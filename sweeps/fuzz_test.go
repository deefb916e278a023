package sweeps

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode, then Validate and Plan whatever decodes: no input may
// panic, and a spec that validates must plan the number of trials it promises.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data), "fuzz.yaml")
		if err != nil {
			return
		}
		if s.Validate() != nil {
			return
		}
		if n, _ := s.trialCount(); n > 20000 {
			return // valid but slow to plan; Plan's cost is covered by the benchmarks
		}
		trials, err := Plan(s)
		if err != nil {
			t.Fatalf("Plan of a valid spec: %v", err)
		}
		n, _ := s.trialCount()
		if s.Method == MethodBayes { // the plan holds the start-up configurations only
			n = min(s.BayesSettings().StartupTrials, s.Trials) * len(s.Seeds)
			// fewer when the space has fewer distinct configurations (StartupQuantiles)
			if len(trials) > 0 && len(trials) <= n && len(trials)%len(s.Seeds) == 0 {
				n = len(trials)
			}
		}
		if len(trials) != n {
			t.Fatalf("Plan made %d trials, trialCount says %d", len(trials), n)
		}
		if _, err := json.Marshal(trials); err != nil {
			t.Fatalf("trials do not encode: %v", err)
		}
	})
}
