package wandb

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ArgsFile is the file, next to the trial's metrics file, that ${args_json_file} names.
const ArgsFile = "wandb-args.json"

// A run's parameters reach this package as package sweeps keeps them: a map from rlsweep parameter name
// (Key of the leaf's path, with the names reserved) to value, and the leaf paths of the config's tree
// (Param.Leaves), in the file's order.

// ConfigYAML is the run config W&B's agent writes for a run and points WANDB_SWEEP_PARAM_PATH at
// (wandb/wandb_agent.py, _command_run; wandb/sdk/lib/config_util.py, save_config_file_from_dict), which
// wandb.init() reads into wandb.config: "wandb_version: 1", then each top-level parameter, keys sorted
// as W&B's server sends them, as {value: ...}, a nested parameter's value the mapping of its own. The
// values are written in YAML's flow style as PyYAML reads them back (floats always with a dot or an
// exponent PyYAML takes for a float, strings double-quoted).
func ConfigYAML(params map[string]any, paths, reserved []string) ([]byte, error) {
	root, err := dict(params, paths, reserved)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("wandb_version: 1\n")
	if len(root.keys) > 0 {
		b.WriteString("\n")
	}
	for i, k := range root.keys {
		b.WriteString(pyJSONString(k) + ": {value: " + yamlFlow(root.vals[i]) + "}\n")
	}
	return []byte(b.String()), nil
}

// yamlFlow writes v in YAML's flow style so that PyYAML (YAML 1.1) reads back the same Python value: as
// JSON writes it but for floats, which PyYAML takes for floats only with a dot (it writes 1.0e-05 where repr
// writes 1e-05) and whose non-finite values it spells .nan and .inf.
func yamlFlow(v any) string {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
		s := pyFloatRepr(x)
		if !strings.Contains(s, ".") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s
	case pyDict:
		return x.format(pyJSONString, yamlFlow)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = yamlFlow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return JSON(v)
}

// Markers a template function returns for Finish to act on: an argument to leave out
// (${args_no_boolean_flags} with a false bool), and the JSON to write to the ${args_json_file} file.
const (
	omitArgMark  = "\x00rlsweep:omit\x00"
	argsFileMark = "\x00rlsweep:args-json-file\x00"
)

// Funcs are the template functions of the argv templates Command writes, for parameters named with
// reserved (Key); a rendered argv goes through Finish.
func Funcs(reserved []string) map[string]any {
	return map[string]any{
		"wandbValue": func(params map[string]any, paths ...string) (string, error) {
			v, err := tree(params, paths, reserved)
			return Str(v), err
		},
		"wandbFlag": func(params map[string]any, paths ...string) (string, error) {
			v, err := tree(params, paths, reserved)
			name := strings.TrimSuffix(strings.SplitN(paths[0], "/", 2)[0], JSONLeaf)
			if b, ok := v.(bool); ok {
				if b {
					return "--" + name, err
				}
				return omitArgMark, err
			}
			return "--" + name + "=" + Str(v), err
		},
		"wandbJSON": func(params map[string]any, paths ...string) (string, error) {
			v, err := dict(params, paths, reserved)
			return JSON(v), err
		},
		"wandbJSONFile": func(_ string, params map[string]any, paths ...string) (string, error) {
			v, err := dict(params, paths, reserved)
			return argsFileMark + JSON(v), err
		},
		"envvar": envVar,
	}
}

// envVar is ${envvar:NAME}: the worker's variable NAME, or NAME itself when it is not set.
func envVar(name string) (string, error) {
	for _, prefix := range []string{"RLSWEEP_", "TEMPORAL_", "AWS_"} {
		if strings.HasPrefix(name, prefix) {
			// The worker's own settings and credentials never reach a trainer (docs/trainer-contract.md).
			return "", fmt.Errorf("${envvar:%s}: the worker's %s* variables never reach a trainer; set what the trainer needs in rlsweep.environment", name, prefix)
		}
	}
	if v, ok := os.LookupEnv(name); ok {
		return v, nil
	}
	return name, nil
}

// tree is a top-level parameter's value: the leaf itself, or the dict of a nested one.
func tree(params map[string]any, paths, reserved []string) (any, error) {
	if len(paths) == 1 && !strings.Contains(paths[0], "/") { // a leaf at the top
		return leaf(params, paths[0], reserved)
	}
	d, err := dict(params, paths, reserved)
	if err != nil || len(d.keys) != 1 {
		return d, err
	}
	return d.vals[0], nil
}

func leaf(params map[string]any, path string, reserved []string) (any, error) {
	path, isJSON := strings.CutSuffix(path, JSONLeaf)
	key := Key(path, reserved)
	v, ok := params[key]
	if !ok {
		return nil, fmt.Errorf("map has no entry for key %q", key)
	}
	if text, isText := v.(string); isJSON && isText {
		return parseOrderedJSON(text)
	}
	return v, nil
}

// parseOrderedJSON reads JSON with objects as pyDict (keys sorted) and integers as int64.
func parseOrderedJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	return readJSON(dec)
}

// readJSON reads the next JSON value from dec.
func readJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			out := []any{}
			for dec.More() {
				x, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, x)
			}
			_, err := dec.Token()
			return out, err
		case '{':
			var out pyDict
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				x, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				out = out.set([]string{fmt.Sprint(k)}, x)
			}
			_, err := dec.Token()
			return out, err
		}
	case json.Number:
		if !strings.ContainsAny(t.String(), ".eE") {
			if n, err := t.Int64(); err == nil {
				return n, nil
			}
		}
		return t.Float64()
	case nil:
		return None{}, nil
	}
	return tok, nil
}

// dict builds the nested dict of leaf paths, in their order.
func dict(params map[string]any, paths, reserved []string) (pyDict, error) {
	var root pyDict
	for _, path := range paths {
		v, err := leaf(params, path, reserved)
		if err != nil {
			return root, err
		}
		root = root.set(strings.Split(strings.TrimSuffix(path, JSONLeaf), "/"), v)
	}
	return root, nil
}

func (d pyDict) set(keys []string, v any) pyDict {
	// Keys stay sorted: W&B's server hands the agent a run's config with every mapping's keys sorted.
	i, found := slices.BinarySearch(d.keys, keys[0])
	if !found {
		var zero any = pyDict{}
		if len(keys) == 1 {
			zero = v
		}
		d.keys, d.vals = slices.Insert(d.keys, i, keys[0]), slices.Insert(d.vals, i, zero)
	}
	if len(keys) == 1 {
		d.vals[i] = v
		return d
	}
	child, _ := d.vals[i].(pyDict)
	d.vals[i] = child.set(keys[1:], v)
	return d
}

// Finish applies the markers of Funcs to a rendered argv: leaves out omitted arguments and writes the
// ${args_json_file} JSON next to metricsFile (in the temporary directory without one), passing its path.
// It is a no-op for an argv without markers.
func Finish(argv []string, metricsFile string) ([]string, error) {
	out := argv[:0]
	for _, a := range argv {
		switch {
		case a == omitArgMark:
			continue
		case strings.HasPrefix(a, argsFileMark):
			dir := os.TempDir()
			if metricsFile != "" {
				dir = filepath.Dir(metricsFile)
			}
			path := filepath.Join(dir, ArgsFile)
			if err := os.WriteFile(path, []byte(strings.TrimPrefix(a, argsFileMark)), 0o644); err != nil {
				return nil, fmt.Errorf("write the ${args_json_file} file: %w", err)
			}
			a = path
		}
		out = append(out, a)
	}
	return out, nil
}
