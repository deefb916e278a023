package sweeps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckTrainerPath checks, on this machine, the program a trial runs: trainer.command[0] of an rlsweep
// spec, a relative path (one with a slash: ./train.py, scripts/train.sh) resolved against the spec
// file's directory and an absolute one as it is, must be an executable file; a bare name (python) must
// be found on PATH. For a W&B config, the program its command runs as a file (${program} not following
// -m) must exist next to the config file, and be executable when the command runs it directly as its
// first element; a module after -m is not checked. A command[0] that is a template ({{...}}) and the
// builtin trainer are not checked. It returns nil or Errors, each FILE:LINE: FIELD: got VALUE, want
// ALLOWED. `validate` and `submit` call it after Load; plans and workers do not (a worker resolves its
// trainer against its own filesystem and PATH when it starts one).
func (s *Spec) CheckTrainerPath() error {
	c := &checker{s: s}
	if w := s.wandb; w != nil {
		if w.programAsFile && w.program != "" {
			given, path := w.program, w.program
			if w.programFrom != "" {
				given = w.programFrom
			} else if w.programPath != "" {
				path = w.programPath
			}
			c.checkFile("program", given, path, w.programFirst, "put the training script next to the config file, or give its absolute path in program")
		}
	} else if t := s.Trainer; t.Builtin == "" && len(t.Command) > 0 {
		prog := t.Command[0]
		switch {
		case strings.TrimSpace(prog) == "" || strings.Contains(prog, "{{"):
		case strings.Contains(prog, "/"):
			path := prog
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(s.file), prog)
			}
			c.checkFile("trainer.command[0]", prog, path, true, "fix the path or make it executable (chmod +x)")
		default:
			if !onPath(prog) {
				c.add("trainer.command[0]", fmt.Sprintf("%q (not found in any directory of PATH)", prog),
					"a program found on PATH: install it, fix the name, or give its path (./train.sh, resolved against the spec file's directory)")
			}
		}
	}
	if len(c.errs) > 0 {
		return c.errs
	}
	return nil
}

// checkFile reports at field when path (written as given) is not a file, or not an executable one
// when exec is set.
func (c *checker) checkFile(field, given, path string, exec bool, fix string) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	want := "an executable file: " + fix
	if !exec {
		want = "a file: " + fix
	}
	st, err := os.Stat(path)
	var why string
	switch {
	case err != nil && os.IsNotExist(err):
		why = "no such file"
	case err != nil:
		why = err.Error()
	case st.IsDir():
		why = "a directory"
	case !st.Mode().IsRegular():
		why = "not a regular file"
	case exec && st.Mode().Perm()&0o111 == 0:
		why = "not executable"
	default:
		return
	}
	c.add(field, fmt.Sprintf("%q (resolved to %s; %s)", given, path, why), want)
}

// onPath reports whether name is an executable file in a directory of PATH, as exec.LookPath finds it
// (an empty entry is the current directory).
func onPath(name string) bool {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return true
		}
	}
	return false
}

// ResolveTrainerPath makes a relative trainer.command[0] with a slash (./train.sh, scripts/train.sh)
// the absolute path it names from the spec file's directory, as CheckTrainerPath resolved it: a
// worker starts the trainer in the trial's own directory, where the relative path would name nothing.
// A spec read from no file, a bare name, a template and an absolute path are left as they are.
func (s *Spec) ResolveTrainerPath() {
	t := &s.Trainer
	if s.wandb != nil || s.file == "" || t.Builtin != "" || len(t.Command) == 0 {
		return
	}
	prog := t.Command[0]
	if !strings.Contains(prog, "/") || strings.Contains(prog, "{{") || filepath.IsAbs(prog) {
		return
	}
	abs, err := filepath.Abs(filepath.Join(filepath.Dir(s.file), prog))
	if err != nil {
		return
	}
	t.Command = append([]string{abs}, t.Command[1:]...)
}
