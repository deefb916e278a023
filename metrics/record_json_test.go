package metrics

import "testing"

func TestLineStep(t *testing.T) {
	for _, tt := range []struct {
		line string
		step int64
		ok   bool
	}{
		{`{"step":0}`, 0, true},
		{`{"step":1234,"r":1}`, 1234, true},
		{`{"step":2048.0,"r":1}`, 2048, true},
		{`{"r":1,"step":1e6}`, 1000000, true},
		{` {"step": 7 }`, 7, true},
		{`{"step":-1}`, 0, false},
		{`{"step":1.5}`, 0, false},
		{`{"step":"3"}`, 0, false},
		{`{"r":1}`, 0, false},
		{`{"step":12`, 0, false},
		{`not json`, 0, false},
	} {
		step, ok := LineStep([]byte(tt.line))
		if step != tt.step || ok != tt.ok {
			t.Errorf("LineStep(%s) = %d, %v; want %d, %v", tt.line, step, ok, tt.step, tt.ok)
		}
	}
}
