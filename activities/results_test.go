package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
)

func ptr(x float64) *float64 { return &x }

func TestLoadTrialSummariesDedupesAndSorts(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	parts := [][]results.TrialSummary{
		{{TrialID: "1-s2", Config: 1, Seed: 2, Outcome: "failed"}, {TrialID: "0-s2", Config: 0, Seed: 2, Outcome: "completed"}},
		{{TrialID: "1-s1", Config: 1, Seed: 1, Outcome: "completed"}, {TrialID: "10-s1", Config: 10, Seed: 1, Outcome: "completed"}},
		{{TrialID: "1-s2", Config: 1, Seed: 2, Outcome: "completed", Objective: ptr(3)}, {TrialID: "0-s1", Config: 0, Seed: 1, Outcome: "diverged"}},
	}
	for i, p := range parts {
		if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID, Part: i, Trials: p}); err != nil {
			t.Fatal(err)
		}
	}
	// Another sweep's results must not leak in.
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID + "-other", Part: 0,
		Trials: []results.TrialSummary{{TrialID: "9-s9", Config: 9, Seed: 9}}}); err != nil {
		t.Fatal(err)
	}
	got, err := sweepstore.New(store).ReadTrialSummaries(ctx, sweepID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range got {
		ids = append(ids, tr.TrialID)
	}
	if want := []string{"0-s1", "0-s2", "1-s1", "1-s2", "10-s1"}; !slices.Equal(ids, want) {
		t.Errorf("trials = %q, want %q", ids, want)
	}
	for _, tr := range got {
		if tr.TrialID == "1-s2" && (tr.Outcome != "completed" || tr.Objective == nil || *tr.Objective != 3) {
			t.Errorf("1-s2 = %+v, want the last record (completed, objective 3)", tr)
		}
	}
	none, err := sweepstore.New(store).ReadTrialSummaries(ctx, "sweep/none/x")
	if err != nil || len(none) != 0 {
		t.Errorf("LoadTrialSummaries of a sweep without results = %v, %v, want none", none, err)
	}
}

// Trials recorded with only their ID and outcome (terminated by hand, never started, no report after a
// cancel) get their configuration, seed and parameters from plan.json, and sort among the others.
func TestLoadTrialSummariesFillsFromThePlan(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	plan := `{"sweep_id": "` + sweepID + `", "params": ["lr"], "trials": [
		{"id": "0-s1", "config": 0, "seed": 1, "params": {"lr": 0.1}}, {"id": "0-s2", "config": 0, "seed": 2, "params": {"lr": 0.1}},
		{"id": "1-s1", "config": 1, "seed": 1, "params": {"lr": 0.2}}, {"id": "1-s2", "config": 1, "seed": 2, "params": {"lr": 0.2}}]}`
	if err := store.Put(ctx, artifacts.PlanKey(sweepID), strings.NewReader(plan)); err != nil {
		t.Fatal(err)
	}
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID, Trials: []results.TrialSummary{
		{TrialID: "1-s2", Outcome: "failed", Error: "trial workflow ended without reporting: terminated"},
		{TrialID: "0-s1", Config: 0, Seed: 1, Params: map[string]any{"lr": 0.1}, Outcome: "completed", Objective: ptr(5)},
		{TrialID: "1-s1", Outcome: "cancelled"},
	}}); err != nil {
		t.Fatal(err)
	}
	got, err := sweepstore.New(store).ReadTrialSummaries(ctx, sweepID)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, tr := range got {
		rows = append(rows, fmt.Sprintf("%s %d %d %v %s", tr.TrialID, tr.Config, tr.Seed, tr.Params["lr"], tr.Outcome))
	}
	if want := []string{"0-s1 0 1 0.1 completed", "1-s1 1 1 0.2 cancelled", "1-s2 1 2 0.2 failed"}; !slices.Equal(rows, want) {
		t.Errorf("trials = %q, want %q", rows, want)
	}
}

func TestWriteResults(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{Store: store}
	trials := []results.TrialSummary{{TrialID: "0-s1", Seed: 1, Outcome: "diverged", Last: results.Values{"reward": math.Inf(-1)}}}
	if err := a.RecordResults(ctx, activities.RecordResultsInput{SweepID: sweepID, Trials: trials}); err != nil {
		t.Fatal(err)
	}
	spec := sweeps.Spec{Name: "unit", Metric: sweeps.Metric{Name: "reward", Goal: "maximize"},
		Parameters: []sweeps.Parameter{{Name: "lr", Value: 0.1}}}
	out, err := a.WriteResults(ctx, activities.WriteResultsInput{SweepID: sweepID, Spec: spec, Status: "completed"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Trials != 1 || out.ResultsKey != artifacts.ResultsKey(sweepID) || out.CSVKey != artifacts.ResultsCSVKey(sweepID) {
		t.Errorf("WriteResults = %+v", out)
	}
	f := &fixture{t: t, store: store}
	var res results.SweepResults
	if err := json.Unmarshal([]byte(f.read(out.ResultsKey)), &res); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if res.Name != "unit" || res.Status != "completed" || !slices.Equal(res.Params, []string{"lr"}) ||
		len(res.Trials) != 1 || !math.IsInf(res.Trials[0].Last["reward"], -1) {
		t.Errorf("results.json = %+v", res)
	}
	if !strings.HasPrefix(f.read(out.CSVKey), "trial_id,config,seed,lr,outcome,") {
		t.Errorf("results.csv = %q", f.read(out.CSVKey))
	}
}

func TestSlots(t *testing.T) {
	if _, err := activities.NewSlots([]string{"0"}, 0); err == nil || !strings.Contains(err.Error(), "--trials-per-gpu") {
		t.Errorf("NewSlots(perGPU 0) = %v, want an error naming --trials-per-gpu", err)
	}
	gpus, perGPU := []string{"0", "1", "2"}, 2
	s, err := activities.NewSlots(gpus, perGPU)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 6 {
		t.Errorf("Len = %d, want 6", s.Len())
	}
	acquire := func(ctx context.Context) (string, error) {
		got, err := s.AcquireN(ctx, 1)
		if err != nil {
			return "", err
		}
		return got.GPUs[0], nil
	}
	release := func(g string) { s.Release(activities.LeaseOf(s, g)) }
	var (
		mu             sync.Mutex
		inUse, maxUsed int
		perGPUUse      = map[string]int{}
		wg             sync.WaitGroup
	)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				g, err := acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inUse++
				perGPUUse[g]++
				maxUsed = max(maxUsed, inUse)
				if perGPUUse[g] > perGPU || !slices.Contains(gpus, g) {
					t.Errorf("GPU %q handed out %d times at once, want at most %d", g, perGPUUse[g], perGPU)
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				inUse--
				perGPUUse[g]--
				mu.Unlock()
				release(g)
			}
		}()
	}
	wg.Wait()
	if maxUsed > s.Len() || maxUsed < 2 {
		t.Errorf("at most %d slots in use at once, want between 2 and the capacity %d", maxUsed, s.Len())
	}
	// With every slot taken, AcquireN waits and gives up with its context.
	var held []string
	for i := 0; i < s.Len(); i++ {
		g, err := acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, g)
	}
	slices.Sort(held)
	if want := []string{"0", "0", "1", "1", "2", "2"}; !slices.Equal(held, want) {
		t.Errorf("all slots = %q, want %q", held, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if g, err := acquire(ctx); err == nil {
		t.Errorf("Acquire with every slot taken = %q, want a context error", g)
	}
	release(held[0])
	if g, err := acquire(context.Background()); err != nil || g != held[0] {
		t.Errorf("Acquire after a Release = %q, %v, want %q", g, err, held[0])
	}
}

// A segment waiting for a GPU slot that never frees is cancelled with its context, and starts no trainer.
func TestTrainSegmentWaitsForSlot(t *testing.T) {
	f := newFixture(t)
	slots, err := activities.NewSlots([]string{"0"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slots.AcquireN(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	f.acts.Slots = slots
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	out := filepath.Join(t.TempDir(), "argv.json")
	in := f.input(1000, map[string]any{"argv_file": out})
	in.Trainer.Command = []string{argvEcho}
	if _, err := f.runIn(f.env(ctx, nil), in); err == nil {
		t.Fatal("TrainSegment without a free slot returned no error")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a segment that never got a slot started its trainer")
	}
	if keys, _ := f.store.List(context.Background(), artifacts.MetricsDir(sweepID, "0-s1")); len(keys) > 0 {
		t.Errorf("a segment that never got a slot stored metrics")
	}
}
