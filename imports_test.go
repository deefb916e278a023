package rlsweep_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md: each package may import only what its row allows, and the pure
// packages never reach Temporal, AWS or the network, even indirectly.
const module = "github.com/rlsweep/rlsweep/"

// allowed lists, per package (prefix match on the path below the module), the module packages and
// third-party prefixes it may import directly. The standard library is always allowed except where
// forbidden says otherwise.
var allowed = map[string][]string{
	// sweeps checks a built-in trainer's parameter names against the trainer's table (package trainer,
	// data; never the trainer itself), the sources and presets against the readers' and the diagnostics
	// rule names against the engine's; it reads W&B sweep configs through sweeps/wandb.
	"sweeps": {"gopkg.in/yaml.v3", "gonum.org/", module + "diagnostics", module + "metrics", module + "trainer",
		module + "sweeps/wandb"},
	// sweeps/wandb: W&B's rules for its sweep configs (which documents are one, values as PyYAML reads
	// them, the agent's command, the run config); it knows no rlsweep package.
	"sweeps/wandb": {"gopkg.in/yaml.v3"},
	// metrics: the record, the canonical metric names, every reader, the line codec and format
	// detection; only the standard library.
	"metrics":     {},
	"diagnostics": {"gonum.org/", module + "metrics"},
	// trainer: the contract (its environment variables) and the built-in trainer's parameter table.
	"trainer":      {},
	"trainer/nn":   {"gonum.org/"},
	"trainer/envs": {},
	"trainer/ppo":  {module + "metrics", module + "trainer", module + "trainer/nn", module + "trainer/envs"},
	// The probe ladder and judge: what any trainer is judged by, so the report can read probes.json
	// through their types. The built-in PPO is adapted to them from trainer/builtin.
	"trainer/probes": {module + "trainer/envs"},
	// The built-in trainer: PPO speaking the trainer contract and the probe protocol.
	"trainer/builtin": {module + "metrics", module + "trainer", module + "trainer/envs", module + "trainer/ppo",
		module + "trainer/probes"},
	"results":    {module + "diagnostics", module + "metrics", module + "sweeps"},
	"regression": {module + "diagnostics", module + "results", module + "sweeps"},
	"scheduler":  {module + "diagnostics", module + "results", module + "sweeps"}, // diagnostics: IQM over seeds, the seed guard's t margin
	"report": {"gonum.org/", module + "diagnostics", module + "results", module + "regression", module + "sweeps",
		module + "trainer/probes"},
	"artifacts": {"github.com/aws/"}, // the ground floor: no project package
	// sweepstore reads and writes a sweep's stored files as the pure packages' types.
	"sweepstore": {module + "artifacts", module + "diagnostics", module + "metrics", module + "regression", module + "report",
		module + "results", module + "sweeps", module + "trainer/probes"},
	// runner starts and stops trainer processes; it knows the trainer contract's variables, renders
	// commands (sweeps), reads and writes metrics (metrics) and speaks the probe protocol (trainer/probes).
	"runner": {module + "diagnostics", module + "metrics", module + "trainer", module + "sweeps", module + "trainer/probes",
		module + "runner/supervisor", "golang.org/x/sys/unix"},
	// runner/supervisor: the process between the worker and a trainer. Its init runs the supervisor
	// before any package it does not import is initialized, so it imports no other package: each one
	// would add its initialization to every trainer's start.
	"runner/supervisor": {"golang.org/x/sys/unix"},
	// The probe stage runs the built-in trainer's probes (trainer/builtin, trainer/probes).
	"activities": {module + "sweeps", module + "diagnostics", module + "metrics", module + "trainer", module + "trainer/builtin",
		module + "trainer/probes", module + "artifacts", module + "report",
		module + "results", module + "regression", module + "sweepstore", module + "runner",
		"go.temporal.io/sdk/activity", "go.temporal.io/sdk/temporal",
		// A heartbeat's error and the cause of a cancelled activity context tell an attempt the server
		// ended (NotFound, worker shutdown) from a server that is only away.
		"go.temporal.io/api/serviceerror", "go.temporal.io/sdk/worker"},
	"workflows": {module + "sweeps", module + "diagnostics", module + "activities", module + "results", module + "regression", module + "scheduler",
		"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/temporal", "go.temporal.io/api/enums/"},
}

// forbiddenDeps lists, per row, module packages it may not reach even indirectly: the probe ladder
// judges every trainer alike and knows none of them.
var forbiddenDeps = map[string][]string{
	"trainer/probes": {module + "trainer/ppo", module + "trainer/nn", module + "trainer/builtin"},
}

// pure packages: no Temporal, no AWS, no network anywhere in their dependencies.
var pure = []string{"sweeps", "sweeps/wandb", "diagnostics", "metrics", "trainer", "trainer/nn", "trainer/envs", "trainer/ppo", "trainer/probes",
	"trainer/builtin", "report", "results", "regression", "scheduler"}

var forbiddenInPure = []string{"go.temporal.io/", "github.com/aws/", "net", "net/http", "os/exec"}

// Packages that run processes but know nothing of Temporal, AWS or the network.
var noService = []string{"runner", "runner/supervisor"}

// Workflow code must be deterministic: these imports have no place in it.
var forbiddenInWorkflows = []string{"math/rand", "math/rand/v2", "os", "os/exec", "net", "net/http", "sync", module + "artifacts", module + "trainer"}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

// rowOf is the row of the package: the longest row that is its path or a folder above it.
func rowOf(importPath string) string {
	rel := strings.TrimPrefix(importPath, module)
	best := ""
	for row := range allowed {
		if (rel == row || strings.HasPrefix(rel, row+"/")) && len(row) > len(best) {
			best = row
		}
	}
	return best
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages, want the whole module", len(pkgs))
	}
	for _, p := range pkgs {
		row := rowOf(p.ImportPath)
		if row == "" {
			continue // worker, cmd, devserver, integration: may import everything
		}
		for _, imp := range p.Imports {
			if isStd(imp) && row != "workflows" {
				continue
			}
			if row == "workflows" && contains(forbiddenInWorkflows, imp) {
				t.Errorf("%s imports %s: workflow code must stay deterministic", p.ImportPath, imp)
				continue
			}
			if isStd(imp) || hasPrefix(allowed[row], imp) {
				continue
			}
			t.Errorf("%s imports %s; the import rules allow %s only the standard library and %q", p.ImportPath, imp, row, allowed[row])
		}
		for _, dep := range p.Deps {
			if contains(forbiddenDeps[row], dep) {
				t.Errorf("%s depends on %s; the import rules forbid %s to reach it", p.ImportPath, dep, row)
			}
		}
		if contains(pure, row) {
			for _, dep := range p.Deps {
				if contains(forbiddenInPure, dep) || hasPrefix(forbiddenInPure[:2], dep) {
					t.Errorf("pure package %s depends on %s", p.ImportPath, dep)
				}
			}
		}
		if contains(noService, row) {
			for _, dep := range p.Deps {
				if contains(forbiddenInPure[:4], dep) || hasPrefix(forbiddenInPure[:2], dep) {
					t.Errorf("package %s, which runs processes only, depends on %s", p.ImportPath, dep)
				}
			}
		}
	}
}

// floors lists, per package, every module package it may reach even indirectly (go list -deps): the
// store stands on no package of rlsweep, the spec only on the diagnostics engine, the metric record, the
// trainer contract's data and its W&B reader, never on a trainer, and the W&B reader on none.
var floors = map[string][]string{
	"artifacts":    {},
	"sweeps":       {module + "diagnostics", module + "metrics", module + "trainer", module + "sweeps/wandb"},
	"sweeps/wandb": {},
}

func TestGroundFloor(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		allow, ok := floors[rel]
		if !ok {
			continue
		}
		seen[rel] = true
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, module) && !contains(allow, dep) {
				t.Errorf("%s depends on %s; it may reach only %q of rlsweep (go list -deps ./%s)", p.ImportPath, dep, allow, rel)
			}
		}
	}
	for rel := range floors {
		if !seen[rel] {
			t.Errorf("go list ./... has no package %s: the floor rule checks nothing", rel)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasPrefix reports whether s is one of prefixes or below a third-party one: a module package matches
// only itself (module + "trainer" allows trainer, not trainer/ppo).
func hasPrefix(prefixes []string, s string) bool {
	for _, p := range prefixes {
		if s == p || !strings.HasPrefix(p, module) && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// cliActivities lists the files of cmd/rlsweep that may import activities, with why: the rest of the
// CLI reads and writes the store through sweepstore and speaks the pure packages' types.
var cliActivities = map[string]string{
	"worker.go": "the worker registers the activities",
	"watch.go":  "watch decodes a running segment's heartbeat (activities.Heartbeat)",
}

func TestCLIImportsActivitiesOnlyForWiring(t *testing.T) {
	files, err := filepath.Glob("cmd/rlsweep/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/rlsweep: %v, %d files", err, len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"`+module+`activities"` && cliActivities[filepath.Base(path)] == "" {
				t.Errorf("%s imports activities; only %v may (the worker and watch wiring)", path, keys(cliActivities))
			}
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
