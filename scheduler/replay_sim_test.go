package scheduler_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// A Rule is a pruning rule under replay. A unit is what the rule starts, judges and stops as one: one
// run for the rules that judge trials, every seed of a configuration for those that judge
// configurations (Seeds).
type Rule interface {
	Name() string
	// Seeds: the rule judges a configuration's seeds together, which start, go on and stop as one.
	Seeds() bool
	// Record is told, in the order things happen, of each record a running unit's run reports (run is
	// the run's index in the unit, rec the record's index in the run); true stops the unit.
	Record(u *Unit, run, rec int) bool
	// Step is told the environment steps every run of a running unit has reached; true stops the unit.
	Step(u *Unit, step int64) bool
	// Ended is told that a unit ended: completed its budget, or stopped.
	Ended(u *Unit, completed bool)
}

// Unit is one thing a rule runs: a run, or a configuration's runs.
type Unit struct {
	ID     int
	Config int
	Runs   []*Run
	// Reached is the steps every run of the unit has trained; Stopped and Completed how it ended.
	Reached   int64
	Stopped   bool
	Completed bool
	// Promoted counts the decisions to go on a rule made about the unit (for a rule's own accounting).
	Promoted int
	next     []int // per run: the index of its next record to report
}

// Outcome is what one replay of a rule cost and decided.
type Outcome struct {
	Rule       string
	StepsUsed  int64 // environment steps trained, over every run
	StepsFull  int64 // what training every run to its budget costs
	Saved      float64
	Top        []int // the rule's best configurations, best first
	BestInTop3 bool  // a full-budget best configuration (its score at the full budget) is among Top's first 3
	// BestRank: the place in Top (1 for the first) of the first full-budget best configuration; 0 when
	// none of them completed.
	BestRank int
	// PickRegret is the full-budget score (Score, over every recorded seed) of the full grid's best
	// configuration less that of the rule's pick, Top[0] (+Inf when nothing completed). PickInNoise:
	// the regret is at most the best configuration's own noise (Grid.Noise).
	PickRegret  float64
	PickInNoise bool
	Infeasible  int // configurations with a diverged seed the rule let train to the end
	UnitsEnded  int
	UnitsPruned int
}

// Replay runs rule over the grid: units start in order (a permutation of the units, see Order), at most
// slots runs at once, every run training at the same rate; the clock advances quantum steps a tick.
func Replay(g *Grid, rule Rule, order []int, slots int, quantum int64) Outcome {
	units := g.units(rule.Seeds())
	out := Outcome{Rule: rule.Name()}
	for _, u := range units {
		out.StepsFull += int64(len(u.Runs)) * g.Steps
	}
	var running []*Unit
	next, free := 0, slots
	for next < len(order) || len(running) > 0 {
		for next < len(order) && free >= len(units[order[next]].Runs) {
			u := units[order[next]]
			u.next = make([]int, len(u.Runs))
			running = append(running, u)
			free -= len(u.Runs)
			next++
		}
		if len(running) == 0 {
			panic(fmt.Sprintf("replay: a unit of %d runs cannot start with %d slots", len(units[order[next]].Runs), slots))
		}
		var still []*Unit
		for _, u := range running {
			u.Reached = min(u.Reached+quantum, g.Steps)
			stop := false
			for i, r := range u.Runs {
				for !stop && u.next[i] < len(r.Steps) && r.Steps[u.next[i]] <= u.Reached {
					stop = rule.Record(u, i, u.next[i])
					u.next[i]++
				}
			}
			if !stop {
				stop = rule.Step(u, u.Reached)
			}
			switch {
			case stop:
				u.Stopped = true
			case u.Reached >= g.Steps:
				u.Completed = true
			default:
				still = append(still, u)
				continue
			}
			rule.Ended(u, u.Completed)
			out.StepsUsed += int64(len(u.Runs)) * u.Reached
			free += len(u.Runs)
			out.UnitsEnded++
			if u.Stopped {
				out.UnitsPruned++
			}
		}
		running = still
	}
	out.Saved = 1 - float64(out.StepsUsed)/float64(out.StepsFull)
	done := map[int][]*Run{}
	for _, u := range units {
		if u.Completed {
			done[u.Config] = append(done[u.Config], u.Runs...)
		}
	}
	out.judge(g, done)
	return out
}

// judge fills in what a replay decided from the runs that completed (done: per configuration):
// Top, BestInTop3, BestRank and Infeasible.
func (out *Outcome) judge(g *Grid, done map[int][]*Run) {
	out.Top = g.rank(done)
	out.BestRank = 0
	if best := g.Best(); len(best) > 0 {
		// Configurations that tie with the best (CartPole's return is capped at 500) are each the best.
		top, _ := Score(g.Configs[best[0]], g.Steps)
		for i, c := range out.Top {
			if v, _ := Score(g.Configs[c], g.Steps); v == top {
				out.BestRank = i + 1
				break
			}
		}
		out.BestInTop3 = out.BestRank >= 1 && out.BestRank <= 3
		out.PickRegret = math.Inf(1)
		if len(out.Top) > 0 {
			pick, _ := Score(g.Configs[out.Top[0]], g.Steps)
			out.PickRegret = top - pick
			out.PickInNoise = out.PickRegret <= g.Noise(best[0])
		}
	}
	out.Infeasible = 0
	for c, runs := range g.Configs {
		if _, ok := Score(runs, g.Steps); !ok && len(done[c]) > 0 {
			out.Infeasible++
		}
	}
}

// units makes the units of a replay: one a run, or one a configuration.
func (g *Grid) units(bySeeds bool) []*Unit {
	var out []*Unit
	for c, runs := range g.Configs {
		if bySeeds {
			out = append(out, &Unit{ID: len(out), Config: c, Runs: runs})
			continue
		}
		for _, r := range runs {
			out = append(out, &Unit{ID: len(out), Config: c, Runs: []*Run{r}})
		}
	}
	return out
}

// rank orders the configurations that have a run that completed (done: per configuration) by what a
// user of the rule sees: the IQM over their completed runs of the final windowed objective, best first.
func (g *Grid) rank(done map[int][]*Run) []int {
	type scored struct {
		c int
		v float64
	}
	var s []scored
	for c, runs := range done {
		if v, ok := Score(runs, g.Steps); ok {
			s = append(s, scored{c, v})
		}
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].v != s[j].v {
			return s[i].v > s[j].v
		}
		return s[i].c < s[j].c
	})
	out := make([]int, len(s))
	for i, x := range s {
		out[i] = x.c
	}
	return out
}

// Order is a random arrival order of a rule's units, from seed.
func Order(g *Grid, bySeeds bool, seed uint64) []int {
	n := len(g.Configs)
	if !bySeeds {
		n *= len(g.Seeds)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// Noise is the standard error of the mean of configuration c's seeds' final windowed objectives
// (Run.Final): how far its score moves with the draw of its seeds. With three or five seeds a grid's
// top configurations often lie within it of each other; which of them a rule ranks first is then the
// seeds' noise, not the rule's choice.
func (g *Grid) Noise(c int) float64 {
	var xs []float64
	for _, r := range g.Configs[c] {
		if v, ok := r.Final(g.Steps); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) < 2 {
		return 0
	}
	_, sd := stat.MeanStdDev(xs, nil)
	return sd / math.Sqrt(float64(len(xs)))
}
