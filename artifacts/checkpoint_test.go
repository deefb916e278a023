package artifacts

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// checkpointDir makes a directory checkpoint like a save_pretrained directory under root/name.
func checkpointDir(t *testing.T, root, name string) {
	t.Helper()
	for rel, body := range map[string]string{
		"config.json": `{"hidden": 64}`, "model.safetensors": strings.Repeat("w", 100000), "sub/optimizer.pt": "adam",
	} {
		p := filepath.Join(root, name, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("config.json", filepath.Join(root, name, "latest.json")); err != nil {
		t.Fatal(err)
	}
}

func TestOpenLocalCheckpoint(t *testing.T) {
	root := t.TempDir()
	checkpointDir(t, root, "step-100")
	if err := os.WriteFile(filepath.Join(root, "ckpt.pt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := OpenLocalCheckpoint(root, "step-100")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"config.json", "latest.json", "model.safetensors", "sub/optimizer.pt"}; !c.Dir || !slices.Equal(c.Files, want) {
		t.Errorf("got dir %v files %v, want a directory of %v", c.Dir, c.Files, want)
	}
	if c, err := OpenLocalCheckpoint(root, "ckpt.pt"); err != nil || c.Dir {
		t.Errorf("file: %+v, %v", c, err)
	}

	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func() string{ // name to announce → what the error must say
		"missing": func() string { return "does not exist" },
		"../ckpt.pt": func() string {
			return "not a path inside the checkpoint directory"
		},
		"/etc/hostname": func() string { return "not a path inside the checkpoint directory" },
		"link-out": func() string {
			must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link-out")))
			return "leads out of the checkpoint directory"
		},
		"sock": func() string {
			wd, _ := os.Getwd()
			must(t, os.Chdir(root))
			l, err := net.Listen("unix", "sock")
			must(t, os.Chdir(wd))
			must(t, err)
			t.Cleanup(func() { l.Close() })
			return "a socket, neither a regular file nor a directory"
		},
		"abs-in-dir": func() string {
			checkpointDir(t, root, "abs-in-dir")
			must(t, os.Symlink(filepath.Join(root, "abs-in-dir", "config.json"), filepath.Join(root, "abs-in-dir", "abs")))
			return "a symbolic link by an absolute path"
		},
		"rel-out-of-dir": func() string {
			checkpointDir(t, root, "rel-out-of-dir")
			must(t, os.Symlink("../ckpt.pt", filepath.Join(root, "rel-out-of-dir", "up")))
			return "a symbolic link out of the directory"
		},
		"link-to-dir": func() string {
			checkpointDir(t, root, "link-to-dir")
			must(t, os.Symlink("sub", filepath.Join(root, "link-to-dir", "loop")))
			return "a symbolic link to a directory, not to a regular file"
		},
		"fifo-in-dir": func() string {
			checkpointDir(t, root, "fifo-in-dir")
			must(t, mkfifo(filepath.Join(root, "fifo-in-dir", "pipe")))
			return "a named pipe, not a regular file"
		},
		"empty": func() string {
			must(t, os.Mkdir(filepath.Join(root, "empty"), 0o755))
			return "an empty directory"
		},
		"bad-name": func() string {
			checkpointDir(t, root, "bad-name")
			must(t, os.WriteFile(filepath.Join(root, "bad-name", "a\\b"), nil, 0o644))
			return "a name no store key may hold"
		},
	}
	if os.Geteuid() != 0 {
		bad["unreadable"] = func() string {
			checkpointDir(t, root, "unreadable")
			must(t, os.Chmod(filepath.Join(root, "unreadable", "config.json"), 0))
			return "permission denied"
		}
	}
	for name, setup := range bad {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			want := setup()
			_, err := OpenLocalCheckpoint(root, name)
			var ce *CheckpointError
			if !errors.As(err, &ce) {
				t.Fatalf("OpenLocalCheckpoint(%q) = %v, want a *CheckpointError", name, err)
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
				t.Errorf("error %q, want it to name %q and say %q", err, name, want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A directory is stored file by file, then its manifest; a restore rebuilds it, checked against the
// manifest. Stored again under the same name, the new files go to a tree of their own, so the stored
// manifest never lists a file another upload is overwriting.
func TestDirectoryCheckpointRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	must(t, err)
	root := t.TempDir()
	checkpointDir(t, root, "step-100")
	c, err := OpenLocalCheckpoint(root, "step-100")
	must(t, err)
	key := "sweeps/x/1/trials/t/checkpoints/step-100"
	if ok, err := CheckpointStored(ctx, s, key); ok || err != nil {
		t.Fatalf("stored before the upload: %v, %v", ok, err)
	}
	must(t, PutCheckpoint(ctx, s, key, c, "tree-a"))
	if ok, err := CheckpointStored(ctx, s, key); !ok || err != nil {
		t.Fatalf("not stored after the upload: %v, %v", ok, err)
	}
	keys, err := s.List(ctx, key+"/")
	must(t, err)
	want := []string{key + "/" + CheckpointManifestName, key + "/tree-a/config.json", key + "/tree-a/latest.json",
		key + "/tree-a/model.safetensors", key + "/tree-a/sub/optimizer.pt"}
	if !slices.Equal(keys, want) {
		t.Errorf("stored keys %v, want %v", keys, want)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	dir, err := GetCheckpoint(ctx, s, key, dst)
	if err != nil || !dir {
		t.Fatalf("GetCheckpoint = %v, %v; want a directory", dir, err)
	}
	for _, rel := range []string{"config.json", "latest.json", "model.safetensors", "sub/optimizer.pt"} {
		got, err := os.ReadFile(filepath.Join(dst, rel))
		must(t, err)
		orig, _ := os.ReadFile(filepath.Join(root, "step-100", rel))
		if string(got) != string(orig) {
			t.Errorf("restored %s differs", rel)
		}
	}

	// A copy (pbt's exploit) is a directory checkpoint of its own.
	must(t, CopyCheckpoint(ctx, s, key, "sweeps/x/1/trials/u/exploits/100/step-100"))
	if _, err := GetCheckpoint(ctx, s, "sweeps/x/1/trials/u/exploits/100/step-100", filepath.Join(t.TempDir(), "copy")); err != nil {
		t.Errorf("restore the copy: %v", err)
	}

	// Stored again: the old tree stays as it was until the new manifest replaces the old one.
	must(t, os.WriteFile(filepath.Join(root, "step-100", "config.json"), []byte(`{"hidden": 128}`), 0o644))
	must(t, PutCheckpoint(ctx, s, key, c, "tree-b"))
	m, err := ReadCheckpointManifest(ctx, s, key)
	must(t, err)
	if m.Tree != "tree-b" {
		t.Errorf("manifest tree %q, want tree-b", m.Tree)
	}
	rc, err := s.Get(ctx, key+"/tree-a/config.json")
	must(t, err)
	rc.Close()

	// A file the manifest lists that differs from what was stored fails the restore.
	must(t, s.Put(ctx, key+"/tree-b/config.json", strings.NewReader("tampered")))
	if _, err := GetCheckpoint(ctx, s, key, filepath.Join(t.TempDir(), "tampered")); err == nil || !strings.Contains(err.Error(), "the manifest lists") {
		t.Errorf("restore of a tampered file: %v, want a mismatch with the manifest", err)
	}
}

// Files stored without their manifest (an upload that stopped midway) are no checkpoint: a restore
// finds nothing to resume from.
func TestHalfUploadedDirectoryIsNotRestored(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	must(t, err)
	key := "sweeps/x/1/trials/t/checkpoints/step-200"
	must(t, s.Put(ctx, key+"/tree-a/config.json", strings.NewReader("{}")))
	_, err = GetCheckpoint(ctx, s, key, filepath.Join(t.TempDir(), "r"))
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("GetCheckpoint of files without a manifest = %v, want ErrNotFound", err)
	}
	if ok, err := CheckpointStored(ctx, s, key); ok || err != nil {
		t.Errorf("CheckpointStored = %v, %v; want false", ok, err)
	}
	// A file checkpoint restores as a file.
	must(t, s.Put(ctx, "sweeps/x/1/trials/t/checkpoints/ckpt.pt", strings.NewReader("weights")))
	dst := filepath.Join(t.TempDir(), "ckpt.pt")
	if dir, err := GetCheckpoint(ctx, s, "sweeps/x/1/trials/t/checkpoints/ckpt.pt", dst); err != nil || dir {
		t.Fatalf("GetCheckpoint of a file = %v, %v", dir, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "weights" {
		t.Errorf("restored %q", b)
	}
}

// A manifest whose paths would leave the checkpoint's key or the restore directory is refused.
func TestCheckpointManifestPathsStayInside(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	must(t, err)
	key := "sweeps/x/1/trials/t/checkpoints/evil"
	for _, m := range []string{
		`{"format":"rlsweep-checkpoint-dir/1","tree":"a","files":[{"path":"../../../../escape","size":1,"sha256":""}]}`,
		`{"format":"rlsweep-checkpoint-dir/1","tree":"a","files":[{"path":"/etc/passwd","size":1,"sha256":""}]}`,
		`{"format":"rlsweep-checkpoint-dir/1","tree":"..","files":[]}`,
		`{"format":"something-else","tree":"a","files":[]}`,
	} {
		must(t, s.Put(ctx, CheckpointManifestKey(key), strings.NewReader(m)))
		if _, err := GetCheckpoint(ctx, s, key, filepath.Join(t.TempDir(), "r")); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("manifest %s: restore = %v, want it refused", m, err)
		}
	}
}

// Local.Get of a folder of keys or of a key below an object finds no object.
func TestLocalGetFolderIsNotFound(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	must(t, err)
	must(t, s.Put(ctx, "a/b/c", strings.NewReader("x")))
	for _, k := range []string{"a/b", "a/b/c/d"} {
		if _, err := s.Get(ctx, k); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", k, err)
		}
	}
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
