package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

// submit --id with an ID whose sweep files are in the store is refused before any server is dialled
// (the address here has none), exit 2, naming the ID and how to choose another; the files stay.
func TestSubmitRefusesAnIDTheStoreHolds(t *testing.T) {
	dir := t.TempDir()
	store, err := artifacts.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"owner.json", "spec.yaml", "plan.json"} {
		t.Run(name, func(t *testing.T) {
			id := "taken-" + strings.TrimSuffix(name, filepath.Ext(name))
			key := artifacts.SweepDir("sweep/minimal/"+id) + "/" + name
			if err := store.Put(context.Background(), key, strings.NewReader("first")); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, "--store", filepath.Join(dir, "store"), "--address", "127.0.0.1:1",
				"submit", "--id", id, "../../sweeps/testdata/good/minimal.yaml")
			want := `--id: got "` + id + `", want an ID no sweep has: sweep sweep/minimal/` + id + ` exists already (the artifact store holds `
			if code != exitInvalid || out != "" || !strings.Contains(errOut, want) ||
				!strings.Contains(errOut, "leave out --id for a fresh random ID, or choose another") {
				t.Errorf("exit code %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, want)
			}
			rc, err := store.Get(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			rc.Close()
		})
	}
}
