package activities_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Paths of the test trainers, built once in TestMain.
var scriptedTrainer, argvEcho string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rlsweep-activities-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scriptedTrainer = filepath.Join(dir, "scripted-trainer")
	argvEcho = filepath.Join(dir, "argv-echo")
	for out, pkg := range map[string]string{
		scriptedTrainer: "../integration/testdata/scripted-trainer",
		argvEcho:        "./testdata/argv-echo",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
