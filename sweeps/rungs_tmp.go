package sweeps

// Temporary until the sweeps branch lands (PruneMode, RungUnit).
const (
	PrunePause = "pause"
	PruneStop  = "stop"
	RungSteps  = "steps"
	RungLogs   = "logs"
)

// RungUnit is the unit of the decision points.
func (s *Spec) RungUnit() string {
	if s.EarlyTerminate == nil {
		return ""
	}
	return RungSteps
}

// PruneMode is pause or stop.
func (s *Spec) PruneMode() string {
	if s.EarlyTerminate == nil {
		return ""
	}
	if s.Trainer.Metrics.Source == "" || s.Trainer.Metrics.Source == "jsonl" {
		return PrunePause
	}
	return PruneStop
}
