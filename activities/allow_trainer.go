package activities

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/sweeps"
)

// ErrTrainerNotAllowed: the program a trial or probe would run is not on the worker's
// --allow-trainer list. Never retried: every attempt on this worker would be refused the same way.
const ErrTrainerNotAllowed = "TrainerNotAllowed"

// TrainerAllowList is the programs a worker runs as trainers (`worker --allow-trainer`). Anyone who can
// start a workflow on the worker's server chooses the command a trial runs; with a list, a worker runs
// only the programs on it. Programs are compared by the file they name once symbolic links are
// resolved, as the worker would execute them: a bare name is looked up on the worker's PATH, a path is
// taken as it is. The built-in trainer (the worker's own executable) is always allowed.
type TrainerAllowList struct {
	files map[string]bool // resolved paths
	given []string        // as the flags named them, for messages
}

// NewTrainerAllowList resolves progs (each an absolute path, a path relative to the working directory,
// or a name on PATH) to the executable files they name; it returns nil for an empty list, which allows
// every program.
func NewTrainerAllowList(progs []string) (*TrainerAllowList, error) {
	if len(progs) == 0 {
		return nil, nil
	}
	l := &TrainerAllowList{files: map[string]bool{}}
	for _, p := range progs {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("--allow-trainer: got an empty program, want a path or a name on PATH (e.g. /opt/train/bin/train)")
		}
		f, err := resolveProgram(p)
		if err != nil {
			return nil, fmt.Errorf("--allow-trainer: got %q (%v), want an executable file: a path, or a name found on PATH", p, err)
		}
		l.files[f] = true
		l.given = append(l.given, p)
	}
	return l, nil
}

// resolveProgram finds the file prog names, as exec.Command does (PATH for a bare name, the path
// itself otherwise, relative to the working directory), with symbolic links resolved.
func resolveProgram(prog string) (string, error) {
	p, err := exec.LookPath(prog)
	if err != nil {
		return "", err
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		return "", err
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	return p, nil
}

// Check returns nil when the list allows prog, the first element of a trainer command as rendered
// for a run, and otherwise a non-retryable error of type ErrTrainerNotAllowed naming the program and
// the flag. A nil list allows every program.
func (l *TrainerAllowList) Check(prog string) error {
	if msg := l.Refusal(prog); msg != "" {
		return temporal.NewNonRetryableApplicationError(msg, ErrTrainerNotAllowed, nil)
	}
	return nil
}

// Refusal says why the list refuses prog, or "" when it allows it.
func (l *TrainerAllowList) Refusal(prog string) string {
	if l == nil {
		return ""
	}
	f, err := resolveProgram(prog)
	if err == nil && l.files[f] {
		return ""
	}
	why := "not on it"
	if err != nil {
		why = "it resolves to no executable file on this worker: " + err.Error()
	} else if f != prog {
		why = "resolved to " + f + ", not on it"
	}
	return fmt.Sprintf("trainer program %q refused by this worker's --allow-trainer list (%s; the list allows %s): "+
		"run the sweep with one of those programs as trainer.command[0], or start the worker with --allow-trainer %s",
		prog, why, strings.Join(quoteAll(l.given), ", "), prog)
}

// Programs are the allowed programs as the flags named them.
func (l *TrainerAllowList) Programs() []string {
	if l == nil {
		return nil
	}
	return slices.Clone(l.given)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// checkTrainer checks the program a trainer is about to run (argv0, its command's first element as
// rendered): a built-in trainer always passes; an external one's program must be on the worker's
// allow-list.
func (a *Activities) checkTrainer(t sweeps.Trainer, argv0 string) error {
	if a.AllowTrainers == nil || t.Builtin != "" {
		return nil
	}
	return a.AllowTrainers.Check(argv0)
}

// checkTrainerCommand checks a command before it is rendered for a run (a probe's): its first element
// rendered with data (as it is, if it does not render) passes checkTrainer.
func (a *Activities) checkTrainerCommand(t sweeps.Trainer, command []string, data sweeps.TemplateData) error {
	if a.AllowTrainers == nil || t.Builtin != "" {
		return nil
	}
	if len(command) == 0 {
		return a.AllowTrainers.Check("")
	}
	if argv, err := sweeps.RenderCommand(command[:1], data); err == nil && len(argv) > 0 {
		return a.AllowTrainers.Check(argv[0])
	}
	return a.AllowTrainers.Check(command[0])
}
