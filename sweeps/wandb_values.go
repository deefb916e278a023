package sweeps

import (
	"math"
	"strconv"

	"github.com/rlsweep/rlsweep/sweeps/wandb"
	"gopkg.in/yaml.v3"
)

// A W&B config's values, read as PyYAML reads them (wandb.Scalar) and reported as the decoder reports
// an rlsweep spec's.

// pyNumber reads a number as W&B does (PyYAML): `1e-5` without a dot is a string there, so it is refused
// here with that explanation.
func (d *decoder) pyNumber(v *yaml.Node, path string) (float64, bool) {
	if v.Kind != yaml.ScalarNode {
		d.fail(v, path, describe(v), "a number")
		return 0, false
	}
	x, _ := wandb.Scalar(v)
	switch n := x.(type) {
	case int64:
		return float64(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			d.fail(v, path, v.Value, "a finite number")
			return 0, false
		}
		return n, true
	case string:
		if _, err := strconv.ParseFloat(n, 64); err == nil {
			d.fail(v, path, quote(n)+" (a string to W&B, which reads YAML 1.1: a number in exponent form needs a dot and a signed exponent)",
				"a number such as "+wandb.YAML11Hint(n))
			return 0, false
		}
	}
	d.fail(v, path, describe(v), "a number")
	return 0, false
}

func (d *decoder) pyInteger(v *yaml.Node, path string) (int64, bool) {
	if v.Kind == yaml.ScalarNode {
		if x, _ := wandb.Scalar(v); x != nil {
			if n, ok := x.(int64); ok {
				return n, true
			}
		}
	}
	d.fail(v, path, describe(v), "an integer")
	return 0, false
}

// wandbJSONValue reads a W&B value that may be a list or a mapping (net_arch: [64, 64]) as PyYAML does,
// kept as the text json.dumps would write: rlsweep's parameter values are scalars, and the argv renders
// it back as Python's str() of the list or dict.
func (d *decoder) wandbJSONValue(v *yaml.Node, path string) (any, bool) {
	x, ok := wandb.Tree(v)
	if !ok {
		d.fail(v, path, describe(v), "numbers, strings, bools, null, and lists and mappings of them")
		return nil, false
	}
	return wandb.JSON(x), true
}

// wandbValue reads a parameter value: a number, string or bool as PyYAML reads it, or, where allowNull
// (in a list of values), null.
func (d *decoder) wandbValue(v *yaml.Node, path string, allowNull bool) (any, bool) {
	const want = "a number, string or bool"
	if x, _ := wandb.Scalar(v); allowNull && v.Kind == yaml.ScalarNode && x == (wandb.None{}) {
		return nil, true // in a list of values: W&B passes None
	}
	if v.Kind != yaml.ScalarNode {
		d.fail(v, path, describe(v), want)
		return nil, false
	}
	x, ok := wandb.Scalar(v)
	switch n := x.(type) {
	case wandb.None:
		ok = false
	case float64:
		ok = ok && !math.IsNaN(n) && !math.IsInf(n, 0)
	}
	if !ok {
		d.fail(v, path, describe(v), want)
		return nil, false
	}
	return x, true
}
