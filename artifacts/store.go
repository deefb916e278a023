// Package artifacts stores what sweeps produce — specs, plans, metrics, logs, checkpoints, reports —
// under one prefix, in a local directory or in S3.
//
// Keys are slash-separated and always relative to the store's prefix; every key is checked by CleanKey
// so no input can name an object outside the prefix.
package artifacts

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound is returned (wrapped) when a key has no object.
var ErrNotFound = errors.New("artifact not found")

// Store is an artifact store. Writes are atomic: a reader sees the old object or the whole new one,
// never a part.
type Store interface {
	// Put stores the bytes read from r under key, replacing any object there.
	Put(ctx context.Context, key string, r io.Reader) error
	// Get opens the object under key; the error wraps ErrNotFound when there is none.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys that start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// URL names the object under key for people: a file path or an s3:// URL.
	URL(key string) string
}
