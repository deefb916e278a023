package sweeps

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rlsweep/rlsweep/sweeps/wandb"
	"gopkg.in/yaml.v3"
)

// A W&B config's parameters, decoded into Parameters: nested ones under dotted names, W&B's distributions
// as rlsweep's (wandb.Distributions, wandb.DistributionKeys), W&B's grid enumeration of ranges.

// wandbParams decodes a W&B parameters mapping (recursively for nested ones), appending leaves to
// s.Parameters under their flat names ("optimizer.lr"), and returns the tree.
func (d *decoder) wandbParams(v *yaml.Node, path, prefix string, s *Spec) []*wandb.Param {
	var tree []*wandb.Param
	d.each(v, path, "a mapping of parameter names to {values | value | min, max | distribution | parameters}", func(name, p string, k, pv *yaml.Node) {
		flat := prefix + name
		if pv.Kind == yaml.MappingNode && hasKey(pv, "parameters") {
			node := &wandb.Param{Name: name, Children: []*wandb.Param{}}
			d.mapping(pv, p, []field{{"parameters", func(cp string, cv *yaml.Node) {
				node.Children = d.wandbParams(cv, cp, flat+".", s)
			}}})
			tree = append(tree, node)
			return
		}
		key := wandbKey(strings.ReplaceAll(flat, ".", "/"))
		if prefix == "" {
			key = wandbKey(name)
		}
		prm := d.wandbLeaf(key, p, k, pv, s)
		s.Parameters = append(s.Parameters, prm)
		tree = append(tree, &wandb.Param{Name: name, JSON: prm.JSON})
	})
	return tree
}

// wandbLeaf decodes the parameter key, a leaf of the tree written at path.
func (d *decoder) wandbLeaf(key, path string, k, pv *yaml.Node, s *Spec) Parameter {
	fp := "parameters." + key // the field path the checker uses
	d.lines[fp] = k.Line
	prm := Parameter{Name: key, Line: k.Line}
	ints := 0 // bounds written as integers
	dist := ""
	d.mappingAt(pv, path, fp, d.wandbLeafFields(&prm, &ints, &dist))
	d.wandbDistribution(&prm, dist, ints, fp, pv)
	if ints == 2 {
		if s.wandb.intBounds == nil {
			s.wandb.intBounds = map[string]bool{}
		}
		s.wandb.intBounds[key] = true
	}
	return prm
}

// wandbLeafFields are the keys of a W&B parameter: what each sets in prm, the count of integer bounds
// and the distribution as written.
func (d *decoder) wandbLeafFields(prm *Parameter, ints *int, dist *string) []field {
	bound := func(dst **float64) func(string, *yaml.Node) {
		return func(bp string, bv *yaml.Node) {
			if f, ok := d.pyNumber(bv, bp); ok {
				*dst = &f
				if x, _ := wandb.Scalar(bv); x != nil {
					if _, isInt := x.(int64); isInt {
						*ints++
					}
				}
			}
		}
	}
	number := func(dst **float64) func(string, *yaml.Node) {
		return func(bp string, bv *yaml.Node) {
			if f, ok := d.pyNumber(bv, bp); ok {
				*dst = &f
			}
		}
	}
	return []field{
		{"values", func(vp string, vv *yaml.Node) { d.wandbValues(vv, vp, prm) }},
		{"value", func(vp string, vv *yaml.Node) { d.wandbConstant(vv, vp, prm) }},
		{"probabilities", func(vp string, vv *yaml.Node) {
			prm.Probabilities = []float64{}
			d.list(vv, vp, "a list of numbers", func(_ int, ep string, e *yaml.Node) {
				if f, ok := d.pyNumber(e, ep); ok {
					prm.Probabilities = append(prm.Probabilities, f)
				}
			})
		}},
		{"min", bound(&prm.Min)},
		{"max", bound(&prm.Max)},
		{"q", func(qp string, qv *yaml.Node) {
			number(&prm.Q)(qp, qv)
			if x, _ := wandb.Scalar(qv); x != nil {
				_, prm.QInt = x.(int64)
			}
		}},
		{"mu", number(&prm.Mu)},
		{"sigma", number(&prm.Sigma)},
		{"a", number(&prm.A)},
		{"b", number(&prm.B)},
		{"distribution", func(dp string, dv *yaml.Node) {
			d.text(dist)(dp, dv)
			if *dist != "" && !slices.Contains(wandb.Distributions, *dist) {
				d.fail(dv, dp, quote(*dist), oneOf(wandb.Distributions))
				*dist = ""
			}
		}},
	}
}

// wandbValues decodes a parameter's values: scalars, or, when any is a list or a mapping, every value
// kept as its JSON (Parameter.JSON).
func (d *decoder) wandbValues(vv *yaml.Node, vp string, prm *Parameter) {
	prm.Values = []any{}
	if vv.Kind == yaml.SequenceNode && slices.ContainsFunc(vv.Content, func(e *yaml.Node) bool { return e.Kind != yaml.ScalarNode }) {
		prm.JSON = true // lists or mappings among the values: every value is kept as its JSON
	}
	d.list(vv, vp, "a list of values", func(_ int, ep string, e *yaml.Node) {
		if prm.JSON {
			if x, ok := d.wandbJSONValue(e, ep); ok {
				prm.Values = append(prm.Values, x)
			}
		} else if x, ok := d.wandbValue(e, ep, true); ok {
			prm.Values = append(prm.Values, x)
		}
	})
}

// wandbConstant decodes a parameter's value: a scalar, or a list, mapping or null kept as its JSON.
func (d *decoder) wandbConstant(vv *yaml.Node, vp string, prm *Parameter) {
	null := false
	if vv.Kind == yaml.ScalarNode {
		x, _ := wandb.Scalar(vv)
		null = x == (wandb.None{}) // kept as JSON, since a nil Value is no value: the trainer gets None
	}
	if vv.Kind == yaml.SequenceNode || vv.Kind == yaml.MappingNode || null {
		if x, ok := d.wandbJSONValue(vv, vp); ok {
			prm.Value, prm.JSON = x, true
		}
	} else if x, ok := d.wandbValue(vv, vp, false); ok {
		prm.Value = x
	}
}

// mappingAt is mapping with the fields' lines also recorded under another path (the checker's).
func (d *decoder) mappingAt(n *yaml.Node, path, alias string, fields []field) {
	d.mapping(n, path, fields)
	if alias == path {
		return
	}
	for k, line := range d.lines {
		if rest, ok := strings.CutPrefix(k, path+"."); ok {
			d.lines[alias+"."+rest] = line
		}
	}
}

// wandbDistribution settles a W&B parameter's distribution: W&B's names for what rlsweep already has
// become rlsweep's (categorical and constant are values and value; log_uniform_values is log_uniform), and
// the forms with exponent bounds (log_uniform, inv_log_uniform, q_log_uniform) become value bounds, the
// same distribution. Keys that do not go with the distribution are refused, as W&B's schema does.
func (d *decoder) wandbDistribution(p *Parameter, dist string, ints int, path string, n *yaml.Node) {
	if dist == "" {
		d.wandbNoDistribution(p, ints, path, n)
		return
	}
	what := "distribution " + dist
	if dist == "categorical" {
		what += " (weights need categorical_w_probabilities)"
	}
	refused := d.wandbAllow(n, path, what, wandb.DistributionKeys(dist)...)
	switch dist {
	case "categorical", "categorical_w_probabilities":
		if p.Values == nil {
			d.wandbRefuse(n, path, "values", "values: [...] with distribution "+dist)
		}
		if dist == "categorical_w_probabilities" && p.Probabilities == nil {
			d.wandbRefuse(n, path, "probabilities", "probabilities: one per value, with distribution categorical_w_probabilities")
		}
		return
	case "constant":
		return
	}
	p.Distribution = dist
	if !refused {
		d.wandbBounds(p, dist, ints, path, n)
	}
}

// wandbNoDistribution settles a parameter without a distribution: values, value, or min and max
// (uniform, int_uniform when both are integers, as W&B infers).
func (d *decoder) wandbNoDistribution(p *Parameter, ints int, path string, n *yaml.Node) {
	switch {
	case p.Values != nil:
		d.wandbAllow(n, path, "values", "values", "probabilities")
	case p.Value != nil:
		d.wandbAllow(n, path, "value", "value")
	case p.Min != nil || p.Max != nil:
		p.Distribution = DistUniform
		if ints == 2 {
			p.Distribution = DistIntUniform
		}
		d.wandbAllow(n, path, "min and max without a distribution", "min", "max")
	default:
		if given := presentKeys(n, "mu", "sigma", "a", "b", "q", "probabilities"); len(given) > 0 {
			d.fail(n, path, "no distribution", "a distribution for "+strings.Join(given, ", "))
		}
	}
}

// wandbAllow refuses each key of wandb.ParamKeys in n that is not one of keys, saying they go with what;
// it reports whether it refused any, and then marks the parameter bad (one message per mistake).
func (d *decoder) wandbAllow(n *yaml.Node, path, what string, keys ...string) bool {
	refused := false
	for _, k := range presentKeys(n, wandb.ParamKeys...) {
		if !slices.Contains(keys, k) {
			d.wandbRefuse(n, path, k, "only "+strings.Join(keys, ", ")+" with "+what)
			refused = true
		}
	}
	if refused {
		d.bad[path] = true
	}
	return refused
}

// wandbRefuse reports key of the parameter at path, on its own line where it is written.
func (d *decoder) wandbRefuse(n *yaml.Node, path, key, want string) {
	d.bad[path+"."+key] = true
	d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr(path+"."+key, n.Line), Field: path + "." + key,
		Got: "a " + key, Want: want})
}

// presentKeys lists the keys of n among keys, in the order of keys.
func presentKeys(n *yaml.Node, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if hasKey(n, k) {
			out = append(out, k)
		}
	}
	return out
}

// wandbBounds settles the bounds of a distribution over a range: q defaults to 1.0 (W&B's, a float),
// both bounds are required, int_uniform takes integers, and exponent bounds become value bounds.
func (d *decoder) wandbBounds(p *Parameter, dist string, ints int, path string, n *yaml.Node) {
	if quantised(dist) || dist == "q_log_uniform" {
		if p.Q == nil {
			q := 1.0 // W&B's default, a float: the values stay floats
			p.Q = &q
		}
	}
	needBounds := slices.Contains(rangeDists, dist) || dist == "log_uniform_values" || dist == "inv_log_uniform" || dist == "q_log_uniform"
	if needBounds && (p.Min == nil || p.Max == nil) {
		for _, k := range []string{"min", "max"} {
			if !hasKey(n, k) {
				d.fail(n, path+"."+k, "nothing", "both min and max for distribution "+dist)
			}
		}
		return
	}
	if dist == DistIntUniform && ints != 2 {
		d.fail(n, path, fmt.Sprintf("min %s, max %s", num(*p.Min), num(*p.Max)), "integers for distribution int_uniform (W&B refuses 1.0)")
	}
	exp := func(f *float64, sign float64) *float64 { x := math.Exp(sign * *f); return &x }
	switch dist {
	case "log_uniform_values":
		p.Distribution = DistLogUniform
		if *p.Min <= 0 { // named as written: W&B's log_uniform, which takes exponents, allows it
			d.bad[path+".min"] = true
			d.errs = append(d.errs, &FieldError{File: d.file, Line: d.lineOr(path+".min", n.Line), Field: path + ".min",
				Got: num(*p.Min), Want: "a number > 0 for log_uniform_values (log_uniform takes exponents: min: -2.3 for e^-2.3)"})
		}
	case DistLogUniform: // W&B: the bounds are exponents
		p.Min, p.Max = exp(p.Min, 1), exp(p.Max, 1)
	case "q_log_uniform":
		p.Distribution = DistQLogUniformValues
		p.Min, p.Max = exp(p.Min, 1), exp(p.Max, 1)
	case "inv_log_uniform": // 1/x log-uniform with exponent bounds: x in [e^-max, e^-min]
		p.Distribution = DistInvLogUniformValues
		p.Min, p.Max = exp(p.Max, -1), exp(p.Min, -1)
	}
}

func (d *decoder) lineOr(path string, line int) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return line
}

// wandbGrid enumerates the ranges W&B's grid search enumerates: int_uniform (every integer from min to
// max) and q_uniform (min, min + q, ... below max, as numpy's arange).
func (d *decoder) wandbGrid(s *Spec) {
	for i := range s.Parameters {
		p := &s.Parameters[i]
		if p.Values != nil { // W&B's grid plans each distinct value once
			var seen []valueKey
			p.Values = slices.DeleteFunc(p.Values, func(v any) bool {
				k := keyOf(v)
				if slices.Contains(seen, k) {
					return true
				}
				seen = append(seen, k)
				return false
			})
		}
		if p.Min == nil || p.Max == nil || *p.Min >= *p.Max {
			continue
		}
		lo, hi := *p.Min, *p.Max
		switch p.Distribution {
		case DistIntUniform:
			if hi-lo >= MaxTrials {
				continue // the checker reports the size
			}
			for x := lo; x <= hi; x++ {
				p.Values = append(p.Values, int64(x))
			}
		case DistQUniform:
			q := *p.Q
			if !(q > 0) || (hi-lo)/q >= MaxTrials {
				continue
			}
			ints := p.QInt && s.wandb.intBounds[p.Name] // numpy's arange gives integers only from integers
			for k := 0; lo+float64(k)*q < hi; k++ {
				x := lo + float64(k)*q
				if ints {
					p.Values = append(p.Values, int64(x))
				} else {
					p.Values = append(p.Values, x)
				}
			}
		default:
			continue
		}
		p.Min, p.Max, p.Q, p.QInt, p.Distribution = nil, nil, nil, false, ""
	}
}

// wandbKey is the rlsweep parameter name of a W&B parameter at a path ("optimizer/lr"): its dotted path,
// under "wandb." when that is a fixed column of results.csv (wandb.Key).
func wandbKey(path string) string { return wandb.Key(path, ReservedParamNames) }
