package scheduler

// The TPE harness of tpe_test.go, for the benchmark in tpe_bench_test.go (package scheduler_test, which
// reads the recorded PPO grids through the replay files, replay_*_test.go).
type Ran = ran

var (
	Drive     = drive
	BayesSpec = bayesSpec
	Num       = num
	Branin    = branin
	MedianOf  = medianOf
)

const (
	BraninMin    = braninMin
	BraninParams = braninParams
)

// The multi-objective harness of tpe_pareto_test.go, for pareto_bench_test.go.
var (
	ParetoSpec     = paretoSpec
	DriveSummaries = driveSummaries
)
