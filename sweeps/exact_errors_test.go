package sweeps

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/exact/")

// TestExactErrors loads each spec under testdata/exact and compares every message, in order, with its
// .golden file (go test -update rewrites them): the order is part of the message (a misspelt key
// before its consequences), and so is each hint.
func TestExactErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/exact/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no specs under testdata/exact: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, err := Load(file)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load = %v, want Errors", err)
			}
			got := strings.ReplaceAll(err.Error(), "testdata/exact/", "") + "\n"
			path := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("Load(%s) =\n%s\nwant (%s)\n%s", file, got, path, want)
			}
		})
	}
}
