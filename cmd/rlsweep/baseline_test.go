package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

func TestBaselineSet(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, _ := json.Marshal(results.SweepResults{SweepID: "sweep/cartpole/ab12", Name: "cartpole",
		Trials: []results.TrialSummary{{TrialID: "0-s1"}, {TrialID: "0-s2"}}})
	if err := store.Put(ctx, artifacts.ResultsKey("sweep/cartpole/ab12"), bytes.NewReader(res)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    BaselineSetOptions
		key     string
		wantErr string
	}{
		{"default name", BaselineSetOptions{Sweep: "cartpole/ab12"}, "baselines/cartpole.json", ""},
		{"named", BaselineSetOptions{Sweep: "sweep/cartpole/ab12", Name: "v2"}, "baselines/v2.json", ""},
		{"bad name", BaselineSetOptions{Sweep: "cartpole/ab12", Name: "a b"}, "", `--name: got "a b"`},
		{"a trial", BaselineSetOptions{Sweep: "cartpole/ab12/0-s1"}, "", "want a sweep, not a trial"},
		{"unfinished sweep", BaselineSetOptions{Sweep: "cartpole/zz"}, "", "has the sweep finished?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runBaselineSet(ctx, store, &out, &tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("runBaselineSet = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rc, err := store.Get(ctx, tt.key)
			if err != nil {
				t.Fatalf("baseline not stored at %s: %v", tt.key, err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(got, res) {
				t.Errorf("stored baseline = %s, want the sweep's results.json", got)
			}
			if !strings.Contains(out.String(), "(2 trials) stored as "+tt.key) {
				t.Errorf("output = %q, want the trial count and the key", out.String())
			}
		})
	}
}

func TestBaselineSetArgv(t *testing.T) {
	f, _, _ := testFactory()
	var got *BaselineSetOptions
	cmd := newBaselineCmd(f, func(o *BaselineSetOptions) error { got = o; return nil })
	if err := parseWith(t, f, cmd, "baseline", "set", "cartpole/ab12", "--name", "v2"); err != nil {
		t.Fatal(err)
	}
	if got == nil || *got != (BaselineSetOptions{Sweep: "cartpole/ab12", Name: "v2"}) {
		t.Errorf("options = %+v, want sweep cartpole/ab12, name v2", got)
	}
}
