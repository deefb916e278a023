package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckGPUsPresent(t *testing.T) {
	present := func(ids ...string) gpuLookup {
		return func(context.Context) ([]string, bool, error) { return ids, true, nil }
	}
	cases := []struct {
		name, gpus string
		lookup     gpuLookup
		wantErr    string // "" accepts
		wantWarn   string
	}{
		{"all present", "0,1", present("0", "1", "2", "3"), "", ""},
		{"none asked", "", present(), "", ""},
		{"missing", "0,1,2,3", present("0", "1"),
			`--gpus: got "0,1,2,3", but GPUs 2,3 are not on this machine; want indices of the GPUs present (nvidia-smi reports 0,1)`, ""},
		{"no GPU at all", "0", present(), `--gpus: got "0", but GPU 0 is not on this machine; want indices of the GPUs present (nvidia-smi reports none)`, ""},
		{"no nvidia-smi", "0,1", func(context.Context) ([]string, bool, error) { return nil, false, nil }, "",
			"warning: --gpus 0,1 not checked: nvidia-smi is not on PATH"},
		{"nvidia-smi fails", "0", func(context.Context) ([]string, bool, error) { return nil, true, errors.New("driver not loaded") }, "",
			"warning: --gpus 0 not checked: driver not loaded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var warn strings.Builder
			err := checkGPUsPresent(context.Background(), c.gpus, c.lookup, &warn)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("got error %v, want %q", err, c.wantErr)
			}
			if !strings.Contains(warn.String(), c.wantWarn) || c.wantWarn == "" && warn.Len() > 0 {
				t.Errorf("got warning %q, want %q", warn.String(), c.wantWarn)
			}
		})
	}
}

// fakeNvidiaSMI puts an nvidia-smi on PATH that reports GPUs 0 and 1 when asked for their indices.
func fakeNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = --query-gpu=index ] && [ \"$2\" = --format=csv,noheader ] || exit 9\nprintf '0\\n1\\n'\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

// TestGPUsNotPresent runs worker and dev with GPUs the machine does not have, as the real nvidia-smi
// exec path reports them (a fake nvidia-smi on PATH): both refuse with exit 2 before connecting to
// anything.
func TestGPUsNotPresent(t *testing.T) {
	fakeNvidiaSMI(t)
	for _, args := range [][]string{{"worker", "--gpus", "0,1,2,3"}, {"dev", "--gpus", "1,2"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, args...)
			want := `--gpus: got "` + args[2] + `", but GPU` // GPU 2 is, or GPUs 2,3 are
			if code != exitInvalid || !strings.Contains(stderr, want) || !strings.Contains(stderr, "nvidia-smi reports 0,1") {
				t.Errorf("got exit %d, stderr %q; want exit 2 naming %q and the GPUs present", code, stderr, want)
			}
		})
	}
}

// TestDevGPUs: dev --gpus gives its worker one slot per GPU, as worker --gpus does, instead of running
// every trainer on the CPU; --slots and --gpus together are refused, as for worker.
func TestDevGPUs(t *testing.T) {
	f, _, _ := testFactory()
	var got DevOptions
	if err := parseWith(t, f, newDevCmd(f, func(o *DevOptions) error { got = *o; return nil }), "dev", "--gpus", "0,1"); err != nil {
		t.Fatal(err)
	}
	f.StoreURL = t.TempDir()
	acts, err := newActivities(f, got.workerOptions())
	if err != nil {
		t.Fatal(err)
	}
	if acts.Slots == nil || acts.Slots.Len() != 2 {
		t.Fatalf("dev --gpus 0,1: worker slots %v, want one per GPU", acts.Slots)
	}
	ids, err := acts.Slots.AcquireN(context.Background(), 2)
	if err != nil || strings.Join(ids.GPUs, ",") != "0,1" {
		t.Errorf("dev --gpus 0,1: acquired %v (%v), want GPUs 0 and 1", ids, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dev", "--gpus", "0,1", "--slots", "4"}, "--slots: got 4 with --gpus 0,1, want one of the two"},
		{[]string{"dev", "--gpus", "0,x"}, `--gpus: got "0,x", want comma-separated GPU indices`},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitInvalid || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: got exit %d, stderr %q; want exit 2 naming %q", c.args, code, stderr, c.want)
		}
	}
}
