package artifacts

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Open returns the store a URL names: a plain path or file:// URL is a local directory. S3 URLs
// (s3://bucket/prefix) are served by the S3 store.
func Open(url string) (Store, error) {
	switch {
	case strings.HasPrefix(url, "file://") && len(url) > len("file://"):
		// "file://" alone falls through to the error: an empty path would silently mean the working directory.
		return NewLocal(strings.TrimPrefix(url, "file://"))
	case strings.HasPrefix(url, "s3://"):
		return NewS3(context.Background(), url)
	case url != "" && !strings.Contains(url, "://"):
		return NewLocal(filepath.Clean(url))
	}
	return nil, fmt.Errorf("artifact store: got %q, want a directory, file:///path or s3://bucket/prefix", url)
}
