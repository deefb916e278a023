package wandb

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestPyFloatRepr: floats are written as Python's repr() writes them.
func TestPyFloatRepr(t *testing.T) {
	tenth := 0.1
	for f, want := range map[float64]string{0.001: "0.001", 1e-5: "1e-05", 1: "1.0", 1e16: "1e+16", 1.5e16: "1.5e+16", 123456789012345.0: "123456789012345.0",
		0.0001: "0.0001", tenth + 0.2: "0.30000000000000004", -2.5: "-2.5", 1e22: "1e+22", 3e-310: "3e-310"} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestPyScalar: scalars read as PyYAML's safe_load reads them (YAML 1.1) and written as Python's str()
// writes them; the expectations are Python's own output for `str(yaml.safe_load("v: " + text)["v"])`.
func TestPyScalar(t *testing.T) {
	cases := map[string]string{
		"1e-5": "1e-5", "1.0e-5": "1e-05", "1.e5": "1.e5", "1.0e+5": "100000.0", ".5": "0.5", "+1": "1", "-0": "0",
		"0o17": "0o17", "017": "15", "0x1F": "31", "0b101": "5", "1_000": "1000", "1:30": "90", "1:30.5": "90.5",
		"yes": "True", "No": "False", "ON": "True", "y": "y", "n": "n", "~": "None", "null": "None", "true": "True",
		".inf": "inf", "-.inf": "-inf", ".NaN": "nan", "1.0": "1.0", "100.0": "100.0", "1.0e+16": "1e+16",
		"0.1e-4": "1e-05", "-1_0.5_0": "-10.5", "2.50": "2.5", "'quoted'": "quoted", `"1.0"`: "1.0",
		"!!float 3": "3.0", "!!str 3": "3", `!!int "7"`: "7", "3.14159265358979323846": "3.141592653589793",
		"0.30000000000000004": "0.30000000000000004", "1e400": "1e400", "007": "7",
	}
	for text, want := range cases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("v: "+text), &doc); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		v, ok := Scalar(doc.Content[0].Content[1])
		if got := Str(v); !ok || got != want {
			t.Errorf("%s: got %q (ok %v), want %q", text, got, ok, want)
		}
	}
}
