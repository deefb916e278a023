package activities

import (
	"os"

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
