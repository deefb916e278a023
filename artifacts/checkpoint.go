package artifacts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A checkpoint a trainer announces is a regular file or a directory of regular files (orbax, torch
// DCP, a Hugging Face save_pretrained directory) under its checkpoint directory.
//
// A file is stored as one object under the checkpoint's key. A directory is stored as a tree under the
// key as a prefix: its files under <key>/<tree>/<path in the directory>, where <tree> is a name of its
// own for each upload (so a directory announced again under the same name never overwrites the files
// a stored manifest lists), then, last, the manifest <key>/rlsweep-checkpoint.json listing the tree and
// every file with its size and SHA-256. The manifest announces the directory: a restore reads a tree
// only through its manifest, so a directory whose upload stopped midway is never resumed from.

// CheckpointManifestName is the object, under a directory checkpoint's key, that lists its files.
const CheckpointManifestName = "rlsweep-checkpoint.json"

// checkpointFormat names the manifest's format.
const checkpointFormat = "rlsweep-checkpoint-dir/1"

// CheckpointManifest lists a directory checkpoint's files.
type CheckpointManifest struct {
	Format string `json:"format"`
	// Tree is the folder under the checkpoint's key that holds the files.
	Tree  string           `json:"tree"`
	Files []CheckpointFile `json:"files"`
}

// CheckpointFile is one file of a directory checkpoint: its slash-separated path in the directory.
type CheckpointFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// CheckpointError is an announced checkpoint that cannot be stored as it is on disk: missing, not
// readable, neither a regular file nor a directory of them, or leading out of the checkpoint
// directory. No retry changes that, so it is never taken for a store outage.
type CheckpointError struct {
	Name    string // the name the trainer announced
	Path    string // the path on disk at fault
	Problem string
}

func (e *CheckpointError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("checkpoint %q: %s", e.Name, e.Problem)
	}
	return fmt.Sprintf("checkpoint %q: %s: %s", e.Name, e.Path, e.Problem)
}

// CheckpointRule says what a trainer may announce as a checkpoint.
const CheckpointRule = "a checkpoint is a regular file or a directory of regular files under the checkpoint directory, " +
	"announced by its path relative to that directory once it is complete on disk; symbolic links may point only to " +
	"regular files inside it (a directory's links only inside that directory, and never by an absolute path)"

// LocalCheckpoint is an announced checkpoint as found on disk.
type LocalCheckpoint struct {
	Name string // as announced: a clean relative key
	Path string // the file or directory
	Dir  bool
	// Files: a directory's files, slash-separated paths relative to Path, sorted.
	Files []string
}

// OpenLocalCheckpoint checks the checkpoint a trainer announced as name under the directory root and
// says what it is: a regular file, or a directory whose every entry is a directory, a regular file or
// a symbolic link by a relative path to a regular file inside it. Anything else is a *CheckpointError
// naming the path: a name that is not a clean relative key (CleanKey) or that leads out of root through
// a link, a missing or unreadable path, a socket, a device, a pipe, an empty directory.
func OpenLocalCheckpoint(root, name string) (*LocalCheckpoint, error) {
	fail := func(p, problem string) error { return &CheckpointError{Name: name, Path: p, Problem: problem} }
	if _, err := CleanKey(name); err != nil {
		return nil, fail("", "not a path inside the checkpoint directory ("+err.Error()+")")
	}
	p := filepath.Join(root, filepath.FromSlash(name))
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fail(root, "the checkpoint directory cannot be read: "+reason(err))
	}
	if _, err := os.Lstat(p); err != nil {
		return nil, fail(p, reason(err))
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fail(p, "a symbolic link that leads nowhere: "+reason(err))
	}
	if !inside(realRoot, real) {
		return nil, fail(p, "leads out of the checkpoint directory (to "+real+")")
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fail(p, reason(err))
	}
	c := &LocalCheckpoint{Name: name, Path: p}
	switch {
	case st.Mode().IsRegular():
		f, err := os.Open(real)
		if err != nil {
			return nil, fail(p, reason(err))
		}
		f.Close()
		return c, nil
	case st.IsDir():
		c.Dir = true
		if c.Files, err = scanTree(name, real); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fail(p, "a "+kind(st.Mode())+", neither a regular file nor a directory")
}

// scanTree lists the regular files of the directory dir (links followed only as OpenLocalCheckpoint
// says), checking that each can be opened.
func scanTree(name, dir string) ([]string, error) {
	fail := func(p, problem string) error { return &CheckpointError{Name: name, Path: p, Problem: problem} }
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail(p, reason(err))
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return fail(p, err.Error())
		}
		rel = filepath.ToSlash(rel)
		if _, err := CleanKey(rel); err != nil {
			return fail(p, "a name no store key may hold ("+err.Error()+")")
		}
		mode := d.Type()
		switch {
		case mode.IsDir():
			return nil
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fail(p, reason(err))
			}
			if filepath.IsAbs(target) {
				return fail(p, "a symbolic link by an absolute path ("+target+")")
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fail(p, "a symbolic link that leads nowhere: "+reason(err))
			}
			if !inside(dir, real) {
				return fail(p, "a symbolic link out of the directory (to "+target+")")
			}
			st, err := os.Stat(real)
			if err != nil {
				return fail(p, reason(err))
			}
			if !st.Mode().IsRegular() {
				return fail(p, "a symbolic link to a "+kind(st.Mode())+", not to a regular file")
			}
		case !mode.IsRegular():
			return fail(p, "a "+kind(mode)+", not a regular file")
		}
		f, err := os.Open(p)
		if err != nil {
			return fail(p, reason(err))
		}
		f.Close()
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fail(dir, "an empty directory (announce a directory once its files are written)")
	}
	return files, nil // WalkDir walks in lexical order
}

// inside tells whether p is root or lies below it (both cleaned, absolute, links resolved).
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// PutCheckpoint stores the checkpoint c under key: a file as one object; a directory as its files under
// key/tree/ and then its manifest, which makes the upload visible to restores. tree names the upload
// (a clean key segment of the caller's choosing, new for each announcement; the same on a retry of the
// same upload). A local file that cannot be read is a *CheckpointError; any other error is the store's.
func PutCheckpoint(ctx context.Context, s Store, key string, c *LocalCheckpoint, tree string) error {
	if !c.Dir {
		f, err := os.Open(c.Path)
		if err != nil {
			return &CheckpointError{Name: c.Name, Path: c.Path, Problem: reason(err)}
		}
		defer f.Close()
		r := &localReader{r: f}
		if err := s.Put(ctx, key, r); err != nil {
			return r.blame(c, c.Path, err)
		}
		return nil
	}
	if _, err := CleanKey(tree); err != nil || strings.Contains(tree, "/") {
		return fmt.Errorf("checkpoint tree name %q: want one clean key segment", tree)
	}
	m := CheckpointManifest{Format: checkpointFormat, Tree: tree}
	for _, rel := range c.Files {
		p := filepath.Join(c.Path, filepath.FromSlash(rel))
		f, err := os.Open(p)
		if err != nil {
			return &CheckpointError{Name: c.Name, Path: p, Problem: reason(err)}
		}
		h := sha256.New()
		r := &localReader{r: io.TeeReader(f, h)}
		err = s.Put(ctx, CheckpointTreeKey(key, tree, rel), r)
		f.Close()
		if err != nil {
			return r.blame(c, p, err)
		}
		m.Files = append(m.Files, CheckpointFile{Path: rel, Size: r.n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return s.Put(ctx, CheckpointManifestKey(key), strings.NewReader(string(b)+"\n"))
}

// localReader reads a local file into a store, keeping the file's own read error apart from the store's.
type localReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *localReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

// blame is the error of a failed Put: the local file's, when reading it failed, else the store's.
func (l *localReader) blame(c *LocalCheckpoint, p string, err error) error {
	if l.err != nil {
		return &CheckpointError{Name: c.Name, Path: p, Problem: "cannot be read: " + reason(l.err)}
	}
	return err
}

// ReadCheckpointManifest reads the manifest of the directory checkpoint under key; the error wraps
// ErrNotFound when there is none (a file checkpoint, or a directory whose upload has not finished).
func ReadCheckpointManifest(ctx context.Context, s Store, key string) (*CheckpointManifest, error) {
	rc, err := s.Get(ctx, CheckpointManifestKey(key))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var m CheckpointManifest
	if err := json.NewDecoder(io.LimitReader(rc, 64<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("checkpoint manifest %s: %w", CheckpointManifestKey(key), err)
	}
	if m.Format != checkpointFormat {
		return nil, fmt.Errorf("checkpoint manifest %s: format %q, want %q", CheckpointManifestKey(key), m.Format, checkpointFormat)
	}
	if _, err := CleanKey(m.Tree); err != nil || strings.Contains(m.Tree, "/") {
		return nil, fmt.Errorf("checkpoint manifest %s: tree %q, want one clean key segment", CheckpointManifestKey(key), m.Tree)
	}
	for _, f := range m.Files {
		if _, err := CleanKey(f.Path); err != nil {
			return nil, fmt.Errorf("checkpoint manifest %s: %w", CheckpointManifestKey(key), err)
		}
	}
	return &m, nil
}

// GetCheckpoint restores the checkpoint stored under key to the local path dst, which must not exist:
// a directory checkpoint (its manifest is stored) as a directory of its files, each checked against the
// manifest's size and SHA-256, else the object under key as a file. It reports whether it restored a
// directory. The error wraps ErrNotFound when neither is stored.
func GetCheckpoint(ctx context.Context, s Store, key, dst string) (dir bool, err error) {
	m, err := ReadCheckpointManifest(ctx, s, key)
	if errors.Is(err, ErrNotFound) {
		return false, getFile(ctx, s, key, dst, nil)
	}
	if err != nil {
		return false, err
	}
	if err := os.RemoveAll(dst); err != nil {
		return true, err
	}
	for _, f := range m.Files {
		if err := getFile(ctx, s, CheckpointTreeKey(key, m.Tree, f.Path), filepath.Join(dst, filepath.FromSlash(f.Path)), &f); err != nil {
			return true, err
		}
	}
	return true, nil
}

// getFile writes the object under key to the file path (making its folders), checking it against want
// when given.
func getFile(ctx context.Context, s Store, key, p string, want *CheckpointFile) error {
	rc, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", key, err)
	}
	if want != nil && (n != want.Size || hex.EncodeToString(h.Sum(nil)) != want.SHA256) {
		return fmt.Errorf("restore %s: %d bytes with SHA-256 %x, the manifest lists %d bytes with %s", key, n, h.Sum(nil), want.Size, want.SHA256)
	}
	return nil
}

// CheckpointStored tells whether a checkpoint, file or directory (its manifest), is stored under key.
func CheckpointStored(ctx context.Context, s Store, key string) (bool, error) {
	for _, k := range []string{CheckpointManifestKey(key), key} {
		rc, err := s.Get(ctx, k)
		if err == nil {
			rc.Close()
			return true, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

// CopyCheckpoint copies the checkpoint under src to dst within the store: a file object, or a directory
// checkpoint's files and then its manifest. The error wraps ErrNotFound when nothing is stored at src.
func CopyCheckpoint(ctx context.Context, s Store, src, dst string) error {
	m, err := ReadCheckpointManifest(ctx, s, src)
	if errors.Is(err, ErrNotFound) {
		return copyStored(ctx, s, src, dst)
	}
	if err != nil {
		return err
	}
	for _, f := range m.Files {
		if err := copyStored(ctx, s, CheckpointTreeKey(src, m.Tree, f.Path), CheckpointTreeKey(dst, m.Tree, f.Path)); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return s.Put(ctx, CheckpointManifestKey(dst), strings.NewReader(string(b)+"\n"))
}

func copyStored(ctx context.Context, s Store, src, dst string) error {
	rc, err := s.Get(ctx, src)
	if err != nil {
		return err
	}
	defer rc.Close()
	return s.Put(ctx, dst, rc)
}
