// Package sweepstore reads and writes a sweep's stored files as their types: the spec, the plan, the
// result parts, results.json, regression.json and what a report draws (curves, divergence verdicts,
// probe results). Activities and the CLI both go through it, so each file has one reader.
package sweepstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/regression"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// PutBytes stores b under key.
func PutBytes(ctx context.Context, s artifacts.Store, key string, b []byte) error {
	return s.Put(ctx, key, bytes.NewReader(b))
}

// PutJSON stores v under key as indented JSON.
func PutJSON(ctx context.Context, s artifacts.Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	return PutBytes(ctx, s, key, b)
}

// GetBytes reads the whole object under key; a missing one wraps artifacts.ErrNotFound.
func GetBytes(ctx context.Context, s artifacts.Store, key string) ([]byte, error) {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return b, nil
}

// GetJSON decodes the JSON object under key into v; a missing one wraps artifacts.ErrNotFound.
func GetJSON(ctx context.Context, s artifacts.Store, key string, v any) error {
	b, err := GetBytes(ctx, s, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

// getOptional is GetJSON for a file a sweep may lack: found says whether it was there.
func getOptional(ctx context.Context, s artifacts.Store, key string, v any) (found bool, err error) {
	err = GetJSON(ctx, s, key, v)
	if errors.Is(err, artifacts.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// LoadSpec reads the spec.json the Plan activity stored; nil when the sweep has none.
func LoadSpec(ctx context.Context, s artifacts.Store, sweepID string) (*sweeps.Spec, error) {
	var spec sweeps.Spec
	if ok, err := getOptional(ctx, s, artifacts.SpecJSONKey(sweepID), &spec); !ok {
		return nil, err
	}
	return &spec, nil
}

// LoadPlanTrials reads the trials of the stored plan.json; none when the sweep has no plan.
func LoadPlanTrials(ctx context.Context, s artifacts.Store, sweepID string) ([]sweeps.Trial, error) {
	var plan struct {
		Trials []sweeps.Trial `json:"trials"`
	}
	_, err := getOptional(ctx, s, artifacts.PlanKey(sweepID), &plan)
	return plan.Trials, err
}

// WriteResultsPart stores a batch of trial summaries as result part number part; writing a part again
// replaces it.
func WriteResultsPart(ctx context.Context, s artifacts.Store, sweepID string, part int, trials []results.TrialSummary) error {
	b, err := json.Marshal(trials)
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return PutBytes(ctx, s, artifacts.ResultsPartKey(sweepID, part), b)
}

// LoadTrialSummaries reads every stored result part of a sweep and merges them with its plan
// (results.Merge): each trial once, in plan order.
func LoadTrialSummaries(ctx context.Context, s artifacts.Store, sweepID string) ([]results.TrialSummary, error) {
	keys, err := s.List(ctx, artifacts.ResultsPartsPrefix(sweepID))
	if err != nil {
		return nil, err
	}
	parts := make([][]results.TrialSummary, 0, len(keys))
	for _, k := range keys {
		var part []results.TrialSummary
		if err := GetJSON(ctx, s, k, &part); err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	plan, err := LoadPlanTrials(ctx, s, sweepID)
	if err != nil {
		// The plan only fills in trials recorded without their summary: without it they stay bare.
		plan = nil
	}
	return results.Merge(parts, plan), nil
}

// WriteDecisionsPart stores a batch of the sweep's scheduler decisions as decision-log part number
// part; writing a part again replaces it.
func WriteDecisionsPart(ctx context.Context, s artifacts.Store, sweepID string, part int, ds []results.Decision) error {
	b, err := json.Marshal(ds)
	if err != nil {
		return fmt.Errorf("encode decisions: %w", err)
	}
	return PutBytes(ctx, s, artifacts.DecisionsPartKey(sweepID, part), b)
}

// LoadDecisions reads every stored decision-log part of a sweep: its decisions in the order they were
// made (Seq), each once (a part written again holds the same decisions).
func LoadDecisions(ctx context.Context, s artifacts.Store, sweepID string) ([]results.Decision, error) {
	keys, err := s.List(ctx, artifacts.DecisionsPartsPrefix(sweepID))
	if err != nil {
		return nil, err
	}
	bySeq := map[int]results.Decision{}
	for _, k := range keys {
		var part []results.Decision
		if err := GetJSON(ctx, s, k, &part); err != nil {
			return nil, err
		}
		for _, d := range part {
			bySeq[d.Seq] = d
		}
	}
	out := make([]results.Decision, 0, len(bySeq))
	for _, d := range bySeq {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// LoadResults reads results.json (of a sweep, or a stored baseline) from key; a missing one wraps
// artifacts.ErrNotFound.
func LoadResults(ctx context.Context, s artifacts.Store, key string) (*results.SweepResults, error) {
	var r results.SweepResults
	if err := GetJSON(ctx, s, key, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// LoadSweepResults reads a finished sweep's results.json; a sweep without one wraps
// artifacts.ErrNotFound.
func LoadSweepResults(ctx context.Context, s artifacts.Store, sweepID string) (*results.SweepResults, error) {
	return LoadResults(ctx, s, artifacts.ResultsKey(sweepID))
}

// LoadRegression reads regression.json, the comparison a nightly regression made; nil for a sweep that
// ran as no regression.
func LoadRegression(ctx context.Context, s artifacts.Store, sweepID string) (*regression.Report, error) {
	var rep regression.Report
	if ok, err := getOptional(ctx, s, artifacts.RegressionKey(sweepID), &rep); !ok {
		return nil, err
	}
	return &rep, nil
}
