package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Local is a Store in a directory of the local file system: the embedded default.
type Local struct {
	root string
}

// NewLocal returns a store rooted at dir, creating the directory.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	}
	return &Local{root: abs}, nil
}

// Root returns the store's directory.
func (l *Local) Root() string { return l.root }

func (l *Local) path(key string) (string, error) {
	k, err := CleanKey(key)
	if err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(k)), nil
}

// Put writes the object to a temporary file beside its final place, syncs it, and renames it there.
func (l *Local) Put(ctx context.Context, key string, r io.Reader) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+filepath.Base(p)+"-*")
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := io.Copy(tmp, readerWithContext{ctx, r}); err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Get opens the object's file.
func (l *Local) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// ENOTDIR: a folder of the key is an object (a file), so the key names none.
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close() // a folder of keys (a directory checkpoint's prefix), not an object
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return f, nil
}

// List walks the directory below the prefix; temporary files of writes in progress are skipped.
func (l *Local) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	// Only the folder the prefix names can hold its keys: walking the whole store would make listing
	// one trial's metrics as slow as the store is large.
	start := l.root
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		if _, err := CleanKey(prefix[:i]); err == nil {
			start = filepath.Join(l.root, filepath.FromSlash(prefix[:i]))
		}
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == start {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		if k := filepath.ToSlash(rel); strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// URL returns the object's file path.
func (l *Local) URL(key string) string {
	return filepath.Join(l.root, filepath.FromSlash(key))
}

// readerWithContext stops a long copy when ctx is done.
type readerWithContext struct {
	ctx context.Context
	r   io.Reader
}

func (r readerWithContext) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
