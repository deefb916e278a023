package activities

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/sweeps"
)

// An allow-list admits the files it names, by any path or link to them, and refuses any other
// program with a non-retryable error that names the program and the flag.
func TestTrainerAllowList(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train")
	other := filepath.Join(dir, "other")
	for _, p := range []string{train, other} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "train-link")
	if err := os.Symlink(train, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	l, err := NewTrainerAllowList([]string{train})
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{train, link, "train", dir + "/./train"} {
		if err := l.Check(prog); err != nil {
			t.Errorf("Check(%q): %v, want allowed", prog, err)
		}
	}
	for _, prog := range []string{other, "other", "/bin/sh", filepath.Join(dir, "missing"), ""} {
		err := l.Check(prog)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != ErrTrainerNotAllowed || !app.NonRetryable() {
			t.Errorf("Check(%q): %v, want a non-retryable %s", prog, err, ErrTrainerNotAllowed)
			continue
		}
		if msg := app.Message(); !strings.Contains(msg, `"`+prog+`"`) || !strings.Contains(msg, "--allow-trainer") {
			t.Errorf("Check(%q): %q, want the program and the flag named", prog, msg)
		}
	}
	var none *TrainerAllowList
	if err := none.Check("/bin/sh"); err != nil {
		t.Errorf("no list: %v, want every program allowed", err)
	}
	a := &Activities{AllowTrainers: l}
	if err := a.checkTrainer(sweeps.Trainer{Builtin: "ppo"}, "/usr/bin/anything"); err != nil {
		t.Errorf("built-in trainer: %v, want allowed", err)
	}
	if err := a.checkTrainerCommand(sweeps.Trainer{}, []string{"{{if .Seed}}" + train + "{{end}}"}, sweeps.TemplateData{Seed: 1}); err != nil {
		t.Errorf("templated program rendering to the allowed file: %v, want allowed", err)
	}
	for _, bad := range [][]string{{""}, {"missing-program"}, {filepath.Join(dir, "nothing")}} {
		if _, err := NewTrainerAllowList(bad); err == nil || !strings.Contains(err.Error(), "--allow-trainer") {
			t.Errorf("NewTrainerAllowList(%q): %v, want an --allow-trainer error", bad, err)
		}
	}
}
