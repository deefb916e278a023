package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

// exportSchedule writes to file a spec that replays the hyperparameter schedule of the best member
// of a pbt sweep (by its objective) as a fixed sweep: the sweep's spec.yaml with every parameter the
// member set made a constant of its start, method pbt and a pbt.schedule (docs/spec.md#pbt). A member
// that replaced a diverged one takes its parent's schedule up to its start. It returns the member.
func exportSchedule(ctx context.Context, store artifacts.Store, sweepID string, res *results.SweepResults, file string) (string, error) {
	if _, err := os.Lstat(file); err == nil {
		return "", invalidInput(fmt.Errorf("--export-schedule: got %q, which exists; want a new file (nothing is overwritten)", file))
	}
	best := -1
	for i, t := range res.Trials {
		if !t.Scored() {
			continue
		}
		if best < 0 || res.Maximize() && *t.Objective > *res.Trials[best].Objective || !res.Maximize() && *t.Objective < *res.Trials[best].Objective {
			best = i
		}
	}
	if best < 0 {
		return "", fmt.Errorf("--export-schedule: sweep %s has no completed trial with an objective to replay", sweepID)
	}
	member := res.Trials[best]
	schedule := memberSchedule(res.Trials, member.TrialID)
	raw, err := sweepstore.New(store).ReadSpecYAML(ctx, sweepID)
	if err != nil {
		return "", fmt.Errorf("--export-schedule: the sweep's spec.yaml: %w", err)
	}
	spec, err := sweeps.Decode(bytes.NewReader(raw), "spec.yaml")
	if err != nil {
		return "", fmt.Errorf("--export-schedule: the sweep's spec.yaml: %w", err)
	}
	if spec.Method != sweeps.MethodPBT || spec.PBT == nil || spec.Format != "" {
		return "", invalidInput(fmt.Errorf("--export-schedule: sweep %s has method %q, want an rlsweep spec with method pbt", sweepID, spec.Method))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("--export-schedule: the sweep's spec.yaml is not a mapping")
	}
	top := doc.Content[0]
	name := spec.Name + "-replay"
	if len(name) > 63 {
		name = name[:63]
	}
	setKey(top, "name", scalar(name))
	setKey(top, "method", scalar(sweeps.MethodPBT))
	for _, k := range []string{"trials", "early_terminate", "run_cap"} {
		deleteKey(top, k)
	}
	if params := mapping(top, "parameters"); params != nil {
		for _, name := range slices.Sorted(maps.Keys(schedule[0].Params)) {
			var v yaml.Node
			if err := v.Encode(map[string]any{"value": schedule[0].Params[name]}); err == nil {
				setKey(params, name, &v)
			}
		}
	}
	var pbt yaml.Node
	if err := pbt.Encode(struct {
		ReadySteps int64           `yaml:"ready_steps"`
		Schedule   []scheduleEntry `yaml:"schedule"`
	}{spec.PBT.ReadySteps, scheduleYAML(schedule)}); err != nil {
		return "", err
	}
	setKey(top, "pbt", &pbt)
	doc.HeadComment = fmt.Sprintf("Replays the hyperparameter schedule of member %s of sweep %s (objective %g):\nrlsweep results %s --export-schedule %s", member.TrialID, sweepID, *member.Objective, sweepID, file)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	if check, err := sweeps.Decode(bytes.NewReader(out.Bytes()), file); err != nil {
		return "", fmt.Errorf("--export-schedule: the replay spec does not decode: %w", err)
	} else if err := check.Validate(); err != nil {
		return "", fmt.Errorf("--export-schedule: the replay spec is not valid: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", invalidInput(fmt.Errorf("--export-schedule: got %q, which exists; want a new file (nothing is overwritten)", file))
		}
		return "", err
	}
	if _, err := f.Write(out.Bytes()); err != nil {
		f.Close()
		return "", err
	}
	return member.TrialID, f.Close()
}

// memberSchedule is a member's schedule from step 0: its parent's up to its start when it replaced a
// diverged member, then its own.
func memberSchedule(trials []results.TrialSummary, id string) []sweeps.ScheduleStep {
	byID := map[string]report.Member{}
	for _, m := range report.Lineage(trials) {
		byID[m.TrialID] = m
	}
	m, ok := byID[id]
	if !ok { // no pbt decision at all: the member's parameters throughout
		i := slices.IndexFunc(trials, func(t results.TrialSummary) bool { return t.TrialID == id })
		return []sweeps.ScheduleStep{{Step: 0, Params: trials[i].Params}}
	}
	var own []sweeps.ScheduleStep
	for _, st := range m.Schedule {
		own = append(own, sweeps.ScheduleStep{Step: st.Step, Params: st.Params})
	}
	if m.Parent != "" && len(own) > 0 && own[0].Step > 0 {
		var before []sweeps.ScheduleStep
		for _, st := range memberSchedule(trials, m.Parent) {
			if st.Step < own[0].Step {
				before = append(before, st)
			}
		}
		own = append(before, own...)
	}
	if len(own) == 0 || own[0].Step != 0 {
		i := slices.IndexFunc(trials, func(t results.TrialSummary) bool { return t.TrialID == id })
		own = append([]sweeps.ScheduleStep{{Step: 0, Params: trials[i].Params}}, own...)
	}
	return own
}

type scheduleEntry struct {
	Step   int64          `yaml:"step"`
	Params map[string]any `yaml:"params"`
}

func scheduleYAML(s []sweeps.ScheduleStep) []scheduleEntry {
	out := make([]scheduleEntry, len(s))
	for i, st := range s {
		out[i] = scheduleEntry{st.Step, st.Params}
	}
	return out
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

func mapping(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.MappingNode {
			return m.Content[i+1]
		}
	}
	return nil
}
