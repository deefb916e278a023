package activities

import (
	"context"
	"fmt"

	"github.com/rlsweep/rlsweep/report"
	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/sweeps"
)

// PickConfirmInput asks for the configurations a sweep with confirm re-runs on other GPU classes.
type PickConfirmInput struct {
	SweepID string
	Top     int
}

// PickConfirm picks the best Top configurations of a sweep's search from its stored results, by the
// leaderboard's ranking (report.Leaderboard: mean objective over completed seeds): those with a
// completed seed and no seed diverged, failed or out of memory — a configuration that did not train
// cleanly on the sweep's own class has nothing to confirm. Each is returned as one trial of it (its
// configuration number, parameters and precision setting); fewer than Top when fewer qualify.
func (a *Activities) PickConfirm(ctx context.Context, in PickConfirmInput) ([]sweeps.Trial, error) {
	st := a.sweepStore()
	spec, err := st.ReadSpec(ctx, in.SweepID)
	if err != nil {
		return nil, err
	}
	trials, err := st.ReadTrialSummaries(ctx, in.SweepID)
	if err != nil {
		return nil, fmt.Errorf("confirm: read the search's results: %w", err)
	}
	res := results.New(in.SweepID, spec, "", trials, nil)
	return PickBest(res, in.Top), nil
}

// PickBest is PickConfirm's choice among res's trials: the first top leaderboard rows with a
// completed seed and none diverged, failed or out of memory.
func PickBest(res *results.SweepResults, top int) []sweeps.Trial {
	var best []sweeps.Trial
	for _, r := range report.Leaderboard(res) {
		if len(best) == top {
			break
		}
		if r.Scored == 0 || r.Outcomes[results.OutcomeDiverged]+r.Outcomes[results.OutcomeFailed]+r.Outcomes[results.OutcomeOOM] > 0 {
			continue
		}
		best = append(best, sweeps.Trial{Config: r.Config, Params: r.Params, Precision: r.Precision})
	}
	return best
}
