package scheduler_test

// The replay files (replay_*_test.go) replay pruning rules on a recorded grid of training runs
// (scripts/ppo-grid, testdata/ppo-grid): every configuration trained on every seed to its whole budget,
// so any rule can be asked, at every boundary, what it would have decided, and what that would have
// cost or saved. They are test code only (TestPruneReplay and the search benchmark use them). A replay
// is pure: the recording is read from a file, and a replay is deterministic given the order in which
// trials arrive. A grid with a total_steps axis trains each run to its own budget; the pruning replays
// take grids whose runs share one budget (Grid.OneBudget).

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/diagnostics"
	"github.com/rlsweep/rlsweep/metrics"
)

// Run is one recorded run: a configuration on a seed, its reward at every record, and whether a stop
// rule of rlsweep's diagnostics (with their defaults) would have stopped it, and where.
type Run struct {
	Config int                `json:"config"`
	Params map[string]float64 `json:"params"`
	Seed   int64              `json:"seed"`
	Steps  []int64            `json:"steps"`
	Reward []metrics.Float    `json:"reward"`
	Stop   *struct {
		Rule string `json:"rule"`
		Step int64  `json:"step"`
	} `json:"stop,omitempty"`
	// Budget is the steps the run trained for: its params' total_steps (BudgetParam) when the grid has
	// that axis, else the grid's Steps.
	Budget int64 `json:"-"`
}

// BudgetParam is the grid axis (scripts/ppo-grid) that sets each run's budget.
const BudgetParam = "total_steps"

// Grid is a recording: its runs, grouped by configuration.
type Grid struct {
	Env     string
	Steps   int64   // every run's budget; the largest one when the runs' budgets differ (Run.Budget)
	Seeds   []int64 // the seeds every configuration ran on
	Configs [][]*Run
}

// Load reads a recording written by scripts/ppo-grid (gzipped JSON lines: a header, then one run a line).
func Load(path string) (*Grid, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return read(zr, path)
}

func read(r io.Reader, name string) (*Grid, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var h struct {
		Grid struct {
			Env   string  `json:"env"`
			Steps int64   `json:"steps"`
			Seeds []int64 `json:"seeds"`
		} `json:"grid"`
	}
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: no header", name)
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Grid.Steps <= 0 || len(h.Grid.Seeds) == 0 {
		return nil, fmt.Errorf("%s: header: want the grid's env, steps and seeds (%v)", name, err)
	}
	g := &Grid{Env: h.Grid.Env, Steps: h.Grid.Steps, Seeds: h.Grid.Seeds}
	byConfig := map[int][]*Run{}
	for sc.Scan() {
		var run Run
		if err := json.Unmarshal(sc.Bytes(), &run); err != nil {
			return nil, fmt.Errorf("%s: run: %w", name, err)
		}
		if len(run.Steps) != len(run.Reward) || len(run.Steps) == 0 {
			return nil, fmt.Errorf("%s: config %d seed %d: %d steps, %d rewards", name, run.Config, run.Seed, len(run.Steps), len(run.Reward))
		}
		run.Budget = g.Steps
		if b, ok := run.Params[BudgetParam]; ok {
			run.Budget = int64(b)
		}
		if run.Budget <= 0 || run.Budget > g.Steps {
			return nil, fmt.Errorf("%s: config %d seed %d: budget %d, want in (0, %d]", name, run.Config, run.Seed, run.Budget, g.Steps)
		}
		byConfig[run.Config] = append(byConfig[run.Config], &run)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for c := 0; c < len(byConfig); c++ {
		runs, ok := byConfig[c]
		if !ok || len(runs) != len(g.Seeds) {
			return nil, fmt.Errorf("%s: config %d has %d runs, want one per seed (%d)", name, c, len(runs), len(g.Seeds))
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i].Seed < runs[j].Seed })
		g.Configs = append(g.Configs, runs)
	}
	return g, nil
}

// OneBudget tells whether every run of the grid trained to the grid's Steps.
func (g *Grid) OneBudget() bool {
	for _, runs := range g.Configs {
		for _, r := range runs {
			if r.Budget != g.Steps {
				return false
			}
		}
	}
	return true
}

// Window is the run's windowed objective at step: the mean reward of its records in the last 10% of the
// steps so far, (0.9·step, step]; false when there is none (or all are NaN).
func (r *Run) Window(step int64) (float64, bool) {
	from := step - step/10
	sum, n := 0.0, 0
	for i, s := range r.Steps {
		if s > step {
			break
		}
		if s > from || s == step {
			if v := float64(r.Reward[i]); !math.IsNaN(v) && !math.IsInf(v, 0) {
				sum += v
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// SegmentEnd is the step a segment told to stop at stop ends at: the run's first record at or past it
// (a trainer stops at the end of the iteration that crosses its stop step); false when the run has
// none there.
func (r *Run) SegmentEnd(stop int64) (int64, bool) {
	i := sort.Search(len(r.Steps), func(i int) bool { return r.Steps[i] >= stop })
	if i == len(r.Steps) {
		return 0, false
	}
	return r.Steps[i], true
}

// Windowed is the windowed objective a segment ending at step reports: the worker's own
// diagnostics.ObjectiveWindow fed the run's records up to step; false before the first record (or when
// the mean is not finite).
func (r *Run) Windowed(step int64) (float64, bool) {
	var w diagnostics.ObjectiveWindow
	for i, s := range r.Steps {
		if s > step {
			break
		}
		w.Add(s, float64(r.Reward[i]))
	}
	return w.Mean()
}

// Last is the reward of the run's last record at or before step: the value a rule that looks at the
// latest report sees; false before the first record.
func (r *Run) Last(step int64) (float64, bool) {
	i := sort.Search(len(r.Steps), func(i int) bool { return r.Steps[i] > step }) - 1
	if i < 0 {
		return 0, false
	}
	return float64(r.Reward[i]), true
}

// Diverged tells whether rlsweep's diagnostics would have stopped the run at or before step.
func (r *Run) Diverged(step int64) bool { return r.Stop != nil && r.Stop.Step <= step }

// Final is the run's windowed objective at the end of its budget; false when it diverged or has none.
// When no record falls in the budget's last 10% (an iteration longer than that, such as 32
// environments × 1,024 steps on a budget of 50,000), it is the window at the record that ends the run,
// the first at or past the budget (SegmentEnd), as the sweep's own window would see it.
func (r *Run) Final(total int64) (float64, bool) {
	if r.Diverged(total) {
		return 0, false
	}
	from := total - total/10
	i := sort.Search(len(r.Steps), func(i int) bool { return r.Steps[i] > from })
	if i < len(r.Steps) && r.Steps[i] > total {
		end := r.Steps[i]
		if r.Diverged(end) {
			return 0, false
		}
		return r.Window(end)
	}
	return r.Window(total)
}

// Score is a configuration's score as rlsweep ranks configurations: the IQM over its seeds of the final
// windowed objective; false when a seed diverged or has no value (the configuration is infeasible).
func Score(runs []*Run, total int64) (float64, bool) {
	var xs []float64
	for _, r := range runs {
		v, ok := r.Final(total)
		if !ok {
			return 0, false
		}
		xs = append(xs, v)
	}
	return diagnostics.IQM(xs), true
}

// Best returns the configurations ranked by Score at their full budget, best first (infeasible ones
// left out).
func (g *Grid) Best() []int {
	type scored struct {
		c int
		v float64
	}
	var s []scored
	for c, runs := range g.Configs {
		if v, ok := Score(runs, runs[0].Budget); ok {
			s = append(s, scored{c, v})
		}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].v > s[j].v })
	out := make([]int, len(s))
	for i, x := range s {
		out[i] = x.c
	}
	return out
}

// A recording with a total_steps axis: each run's budget is its total_steps, the grid is not of one
// budget, a run's final value is the window at its budget, or at the record that ends it when its last
// iteration crosses the whole window; a budget past the grid's steps is refused.
func TestLoadBudgetAxis(t *testing.T) {
	const file = `{"grid":{"env":"Pendulum-v1","steps":100000,"seeds":[1]}}
{"config":0,"params":{"lr":0.001,"total_steps":50000},"seed":1,"steps":[32768,65536],"reward":[-900,-600]}
{"config":1,"params":{"lr":0.001,"total_steps":100000},"seed":1,"steps":[32768,65536,98304,131072],"reward":[-900,-600,-400,-300]}
`
	g, err := read(strings.NewReader(file), "budget")
	if err != nil {
		t.Fatal(err)
	}
	short, long := g.Configs[0][0], g.Configs[1][0]
	if short.Budget != 50_000 || long.Budget != 100_000 || g.OneBudget() {
		t.Errorf("budgets %d and %d, one budget %v; want 50000, 100000, false", short.Budget, long.Budget, g.OneBudget())
	}
	if v, ok := short.Final(short.Budget); !ok || v != -600 {
		t.Errorf("50,000 steps in iterations of 32,768: final %g (%v), want -600 (the record at 65,536)", v, ok)
	}
	if v, ok := long.Final(long.Budget); !ok || v != -400 {
		t.Errorf("100,000 steps: final %g (%v), want -400 (the record at 98,304)", v, ok)
	}
	bad := strings.Replace(file, `"total_steps":50000`, `"total_steps":150000`, 1)
	if _, err := read(strings.NewReader(bad), "budget"); err == nil {
		t.Error("a run's total_steps past the grid's steps: read")
	}
}
