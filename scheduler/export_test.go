package scheduler

// The TPE harness of tpe_test.go, for the benchmark in tpe_bench_test.go (package scheduler_test, which
// imports scheduler/replay for the recorded PPO grids).
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
