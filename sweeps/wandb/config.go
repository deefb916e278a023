// Package wandb reads W&B Sweeps configs as W&B does, for package sweeps, which turns them into specs
// (docs/spec.md, "W&B sweep configs"): which documents are W&B configs, their values as PyYAML reads them
// and Python writes them, their command as argv templates that render, for each trial, exactly the argv
// W&B's agent would run (wandb/wandb_agent.py and wandb/sdk/launch/sweeps/utils.py in
// github.com/wandb/wandb), and the run config a script reads through wandb.config.
//
// It knows nothing of rlsweep's spec: package sweeps decodes a W&B config into a Spec with the help of
// these functions, reporting problems as it reports them for its own specs.
package wandb

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// IsConfig reports whether a top-level mapping is a W&B sweep config: no trainer and no key that only
// rlsweep specs have, and a key that only W&B configs have, or parameters with method or without name
// (an rlsweep spec always has a name; a W&B config that lacks method and program is told so).
func IsConfig(root *yaml.Node) bool {
	has := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		has[root.Content[i].Value] = true
	}
	for _, k := range []string{"trainer", "seeds", "trials", "sampler_seed", "probes", "diagnostics", "concurrency",
		"resources", "retries", "artifacts", "regression"} {
		if has[k] {
			return false
		}
	}
	for _, k := range []string{"program", "command", "project", "entity", "run_cap", "controller", "job", "image_uri",
		"scheduler", "apiVersion", "kind", "metrics", "rlsweep"} {
		if has[k] {
			return true
		}
	}
	return has["parameters"] && (has["method"] || !has["name"])
}

// Hints explains top-level W&B Sweeps keys that an rlsweep spec spells differently: for an unknown key
// of an rlsweep spec, what it is called there.
var Hints = map[string]string{
	"program":    "trainer.command (rlsweep runs an argv, not a program name)",
	"command":    "trainer.command",
	"run_cap":    "trials",
	"project":    "name",
	"entity":     "nothing (rlsweep has no entities)",
	"parameters": "parameters",
}

// Key is the rlsweep parameter name of a W&B parameter at a path ("optimizer/lr"): its dotted path
// ("optimizer.lr"), under "wandb." when that is one of reserved, the names an rlsweep parameter may not
// take (a W&B parameter named seed becomes wandb.seed; the trainer still gets --seed).
func Key(path string, reserved []string) string {
	key := strings.ReplaceAll(path, "/", ".")
	if slices.Contains(reserved, key) {
		return "wandb." + key
	}
	return key
}

// SanitizeName makes a W&B project or sweep name a valid rlsweep sweep name: characters outside
// [A-Za-z0-9._-] become '-', a leading '.', '_' or '-' is dropped, at most 63 characters; "wandb-sweep"
// when nothing is left.
func SanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	out := strings.TrimLeft(string(b), "._-")
	if len(out) > 63 {
		out = out[:63]
	}
	if out == "" {
		out = "wandb-sweep"
	}
	return out
}

// MaxExpandedNodes bounds the YAML nodes a W&B config may expand to through its aliases.
const MaxExpandedNodes = 100_000

// ExpandAliases resolves anchors, aliases and << merge keys as PyYAML does, copying each aliased node.
// ok is false, and root is returned as it is, for a document that would expand past MaxExpandedNodes.
func ExpandAliases(root *yaml.Node) (out *yaml.Node, ok bool) {
	e := expander{}
	out = e.expand(root)
	if e.count > MaxExpandedNodes {
		return root, false
	}
	return out, true
}

// expander counts the nodes it has made, to stop at MaxExpandedNodes.
type expander struct{ count int }

func (e *expander) expand(n *yaml.Node) *yaml.Node {
	e.count++
	if e.count > MaxExpandedNodes {
		return n
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return e.expand(n.Alias)
	}
	c := *n
	c.Anchor = ""
	c.Content = nil
	if n.Kind != yaml.MappingNode {
		for _, ch := range n.Content {
			c.Content = append(c.Content, e.expand(ch))
		}
		return &c
	}
	var merged []*yaml.Node // keys merged in by <<, which the mapping's own keys override
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style == 0 {
			merged = append(merged, e.mergeSources(v)...)
			continue
		}
		c.Content = append(c.Content, e.expand(k), e.expand(v))
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if !hasKey(&c, merged[i].Value) {
			c.Content = append(c.Content, merged[i], merged[i+1])
		}
	}
	return &c
}

// mergeSources expands the value of a << key, a mapping or a list of them, into the keys and values it
// merges in.
func (e *expander) mergeSources(v *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	sources := []*yaml.Node{e.expand(v)}
	if sources[0].Kind == yaml.SequenceNode {
		sources = sources[0].Content
	}
	for _, src := range sources {
		if src.Kind == yaml.MappingNode {
			out = append(out, src.Content...)
		}
	}
	return out
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
