package ppo

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/rlsweep/rlsweep/trainer"
)

// notParams are the Config fields no parameter key sets: the annealing horizon comes from
// RLSWEEP_TOTAL_STEPS, the bug from --inject-bug or trainer.PPOBugParam.
var notParams = []string{"TotalSteps", "Bug"}

// TestParamTable ties the built-in trainer's parameter table (package trainer, which sweeps checks
// specs against) to Config: every name of the table sets exactly one Config field, no two names the
// same one, every Config field but notParams is set by a name, and Set knows no other name.
func TestParamTable(t *testing.T) {
	names := trainer.PPOParamNames()
	sorted := slices.Sorted(slices.Values(names))
	if len(slices.Compact(slices.Clone(sorted))) != len(names) {
		t.Errorf("trainer.PPOParamNames() = %v: a name is listed twice", names)
	}
	var setters []string
	for k := range params {
		setters = append(setters, k)
	}
	sort.Strings(setters)
	if !slices.Equal(setters, sorted) {
		t.Errorf("Set knows %v, the trainer's table lists %v: add the missing setter or table entry", setters, sorted)
	}

	typ := reflect.TypeOf(Config{})
	setBy := map[string]string{} // Config field -> parameter name
	for _, name := range names {
		field := changedField(t, name)
		if field == "" {
			continue
		}
		if other, ok := setBy[field]; ok {
			t.Errorf("%s and %s both set Config.%s", other, name, field)
		}
		setBy[field] = name
	}
	for i := range typ.NumField() {
		f := typ.Field(i).Name
		if _, ok := setBy[f]; !ok && !slices.Contains(notParams, f) {
			t.Errorf("Config.%s is set by no name of trainer.PPOParamNames: add its name to the table (and a setter), or to notParams", f)
		}
	}
	for _, f := range notParams {
		if _, ok := typ.FieldByName(f); !ok {
			t.Errorf("notParams names Config.%s, which does not exist", f)
		}
	}

	for alias, to := range trainer.PPOParamAliases() {
		if !slices.Contains(names, to) {
			t.Errorf("alias %s stands for %s, which is not in the trainer's table", alias, to)
		}
		if slices.Contains(names, alias) {
			t.Errorf("alias %s is itself a name of the table", alias)
		}
	}
	if slices.Contains(names, trainer.PPOBugParam) {
		t.Errorf("the table lists %s, a test aid that is not a hyperparameter", trainer.PPOBugParam)
	}
	var c Config
	if err := c.Set(trainer.PPOBugParam, "no-discount"); err == nil {
		t.Errorf("Set(%s) = nil, want an unknown parameter (the trainer takes it apart from Set)", trainer.PPOBugParam)
	}
	if BugParam != trainer.PPOBugParam {
		t.Errorf("BugParam = %q, want the table's %q", BugParam, trainer.PPOBugParam)
	}
}

// changedField sets name on a default Config to the first candidate value Set accepts that changes the
// Config, and returns the one field it changed ("" after reporting an error).
func changedField(t *testing.T, name string) string {
	t.Helper()
	base := CleanRL()
	for _, v := range []any{0.37, 3.0, true, false, "relu", "tanh", []any{7.0, 9.0}} {
		c := CleanRL()
		if c.Set(name, v) != nil || reflect.DeepEqual(c, base) {
			continue
		}
		var changed []string
		cv, bv := reflect.ValueOf(c), reflect.ValueOf(base)
		for i := range cv.NumField() {
			if !reflect.DeepEqual(cv.Field(i).Interface(), bv.Field(i).Interface()) {
				changed = append(changed, cv.Type().Field(i).Name)
			}
		}
		if len(changed) != 1 {
			t.Errorf("Set(%s, %v) changed Config fields %v, want exactly one", name, v, changed)
			return ""
		}
		return changed[0]
	}
	t.Errorf("Set(%s, …) accepted no value that changes Config: the name sets nothing", name)
	return ""
}
