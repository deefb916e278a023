package artifacts_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
)

func newLocal(t *testing.T) *artifacts.Local {
	t.Helper()
	s, err := artifacts.NewLocal(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, s artifacts.Store, key string) (string, error) {
	t.Helper()
	rc, err := s.Get(context.Background(), key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return string(b), nil
}

func TestLocalRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	objects := map[string]string{
		"sweeps/a/plan.json":                   `{"trials":[]}`,
		"sweeps/a/trials/0-s1/metrics.jsonl":   "{\"step\":1}\n",
		"sweeps/a/trials/0-s1/logs/seg-0.log":  "",
		"sweeps/b/plan.json":                   "b",
		"top.txt":                              "top",
		"sweeps/a/trials/0-s1/checkpoints/c.b": string([]byte{0, 1, 2, 255}),
	}
	for k, v := range objects {
		if err := s.Put(ctx, k, strings.NewReader(v)); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
	for k, want := range objects {
		got, err := get(t, s, k)
		if err != nil || got != want {
			t.Errorf("Get(%q) = %q, %v, want %q", k, got, err, want)
		}
	}
	// Put replaces.
	if err := s.Put(ctx, "top.txt", strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, s, "top.txt"); got != "new" {
		t.Errorf("after a second Put, Get = %q, want %q", got, "new")
	}
	got, err := s.List(ctx, "sweeps/a/")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sweeps/a/plan.json", "sweeps/a/trials/0-s1/checkpoints/c.b",
		"sweeps/a/trials/0-s1/logs/seg-0.log", "sweeps/a/trials/0-s1/metrics.jsonl"}
	if !slices.Equal(got, want) {
		t.Errorf("List(sweeps/a/) = %q, want %q", got, want)
	}
	all, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(objects) || !slices.IsSorted(all) {
		t.Errorf("List(\"\") = %q, want all %d keys, sorted", all, len(objects))
	}
	if got, want := s.URL("sweeps/b/plan.json"), filepath.Join(s.Root(), "sweeps", "b", "plan.json"); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}

func TestLocalGetMissing(t *testing.T) {
	s := newLocal(t)
	for _, k := range []string{"nope", "sweeps/x/plan.json"} {
		_, err := s.Get(context.Background(), k)
		if !errors.Is(err, artifacts.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want an error wrapping ErrNotFound", k, err)
		}
	}
	// A bad key is an error, but not "not found": the caller must not treat it as an empty object.
	if _, err := s.Get(context.Background(), "../x"); err == nil || errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("Get(../x) = %v, want a key error that is not ErrNotFound", err)
	}
}

// listTree returns every path under dir, relative, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLocalPutRejectsHostileKeys(t *testing.T) {
	parent := t.TempDir()
	s, err := artifacts.NewLocal(filepath.Join(parent, "store"))
	if err != nil {
		t.Fatal(err)
	}
	before := listTree(t, parent)
	for _, k := range []string{"", "/abs", "/tmp/x", "../escape", "a/../../escape", "..", ".", "a//b",
		"..\\escape", "a\x00b", "a\u202eb", "a\xffb", "a/", "./a"} {
		if err := s.Put(context.Background(), k, strings.NewReader("x")); err == nil {
			t.Errorf("Put(%q) = nil, want an error", k)
		}
	}
	if after := listTree(t, parent); !slices.Equal(before, after) {
		t.Errorf("hostile Puts changed the tree: before %q, after %q", before, after)
	}
	if _, err := os.Stat("/tmp/x"); err == nil {
		// Not ours to remove; only report if it looks like our write.
		if b, _ := os.ReadFile("/tmp/x"); string(b) == "x" {
			t.Errorf("Put(/tmp/x) wrote outside the root")
		}
	}
}

// blockingReader yields n bytes of fill, stopping halfway until release is closed.
type blockingReader struct {
	n, done int
	fill    byte
	half    chan struct{} // closed when half the bytes are out
	release chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if r.done >= r.n {
		return 0, io.EOF
	}
	if r.done >= r.n/2 && r.half != nil {
		close(r.half)
		r.half = nil
		<-r.release
	}
	k := min(len(p), r.n-r.done)
	if r.done < r.n/2 {
		k = min(k, r.n/2-r.done)
	}
	for i := range p[:k] {
		p[i] = r.fill
	}
	r.done += k
	return k, nil
}

func TestLocalPutIsAtomic(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	const size = 32 << 20
	for _, old := range []string{"", "old content"} {
		name := "missing"
		if old != "" {
			name = "replace"
		}
		t.Run(name, func(t *testing.T) {
			key := "sweeps/x/" + name + ".bin"
			if old != "" {
				if err := s.Put(ctx, key, strings.NewReader(old)); err != nil {
					t.Fatal(err)
				}
			}
			r := &blockingReader{n: size, fill: 'z', half: make(chan struct{}), release: make(chan struct{})}
			half := r.half
			errc := make(chan error, 1)
			go func() { errc <- s.Put(ctx, key, r) }()
			select {
			case <-half:
			case <-time.After(10 * time.Second):
				t.Fatal("Put never read half its input")
			}
			got, err := get(t, s, key)
			switch {
			case old == "" && !errors.Is(err, artifacts.ErrNotFound):
				t.Errorf("Get during Put = %d bytes, %v, want ErrNotFound", len(got), err)
			case old != "" && (err != nil || got != old):
				t.Errorf("Get during Put = %d bytes, %v, want the old %q", len(got), err, old)
			}
			keys, err := s.List(ctx, "sweeps/x/")
			if err != nil {
				t.Fatal(err)
			}
			if want := old != ""; slices.Contains(keys, key) != want || len(keys) > 1 {
				t.Errorf("List during Put = %q, want the temporary file hidden", keys)
			}
			close(r.release)
			if err := <-errc; err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, err = get(t, s, key)
			if err != nil || len(got) != size || strings.Trim(got, "z") != "" {
				t.Errorf("Get after Put = %d bytes, %v, want %d bytes of z", len(got), err, size)
			}
			if keys, _ := s.List(ctx, "sweeps/x/"); !slices.Equal(keys, []string{key}) {
				t.Errorf("List after Put = %q, want only %q", keys, key)
			}
		})
		if err := os.RemoveAll(filepath.Join(s.Root(), "sweeps")); err != nil {
			t.Fatal(err)
		}
	}
}

// A Put whose context is cancelled leaves neither the object nor a temporary file.
func TestLocalPutCancelled(t *testing.T) {
	s := newLocal(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Put(ctx, "a/b", bytes.NewReader(make([]byte, 1<<20)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(filepath.Join(s.Root(), "a"))
	if len(entries) != 0 {
		t.Errorf("cancelled Put left %d files behind", len(entries))
	}
}

func TestLocalListSkipsTemporaryFiles(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	for _, k := range []string{"b/2", "a/1", "b/1", "c"} {
		if err := s.Put(ctx, k, strings.NewReader(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.Root(), "b", ".tmp-3-12345"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/1", "b/1", "b/2", "c"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	got, _ = s.List(ctx, "b/")
	if want := []string{"b/1", "b/2"}; !slices.Equal(got, want) {
		t.Errorf("List(b/) = %q, want %q", got, want)
	}
	got, _ = s.List(ctx, "zzz")
	if len(got) != 0 {
		t.Errorf("List(zzz) = %q, want none", got)
	}
}
