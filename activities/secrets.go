package activities

import (
	"os"

	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/runner"
)

// masker is what the activities mask trainer output with: Activities.Secrets, else the secrets of the
// worker's environment as it is now.
func (a *Activities) masker() *runner.Masker {
	if a != nil && a.Secrets != nil {
		return a.Secrets
	}
	return runner.NewMasker(runner.WorkerSecrets(os.Environ()))
}

// maskRecord returns rec with the secrets m knows masked in the names the trainer chose: the keys of
// its values and the checkpoint it announced. Every record is masked so as it is taken in, so what
// leaves the worker from it (stored metrics, heartbeats, results, diagnostics evidence, object keys)
// holds no secret a trainer used as a name. rec is not modified.
func maskRecord(m *runner.Masker, rec metrics.Record) metrics.Record {
	if m.Len() == 0 {
		return rec
	}
	rec.Checkpoint = m.MaskName(rec.Checkpoint)
	var values map[string]float64
	for k := range rec.Values {
		if m.MaskName(k) != k {
			values = make(map[string]float64, len(rec.Values))
			break
		}
	}
	if values == nil {
		return rec
	}
	for k, v := range rec.Values {
		values[m.MaskName(k)] = v
	}
	rec.Values = values
	return rec
}
