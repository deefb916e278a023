package artifacts

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Open returns the store a URL names: a plain path or file:// URL is a local directory. S3 URLs
// (s3://bucket/prefix) are served by the S3 store. An error never repeats a URL's user information
// (RedactURL): it may hold a password. opts configure an S3 store (WithLogger).
func Open(url string, opts ...Option) (Store, error) {
	switch {
	case RedactURL(url) != url:
		return nil, fmt.Errorf("artifact store: got %q, which holds user information, want a directory, file:///path or s3://bucket/prefix (S3 credentials come from the AWS credential chain, never the URL)", RedactURL(url))
	case strings.HasPrefix(url, "file://") && len(url) > len("file://"):
		// "file://" alone falls through to the error: an empty path would silently mean the working directory.
		return NewLocal(strings.TrimPrefix(url, "file://"))
	case strings.HasPrefix(url, "s3://"):
		return NewS3(context.Background(), url, opts...)
	case url != "" && !strings.Contains(url, "://"):
		return NewLocal(filepath.Clean(url))
	}
	return nil, fmt.Errorf("artifact store: got %q, want a directory, file:///path or s3://bucket/prefix", url)
}

// RedactURL returns u with the user information of its authority (scheme://user:password@host/…)
// replaced by "REDACTED", for messages: it may hold a password no message should repeat. Any other
// string comes back as it is.
func RedactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	authority, path, slash := strings.Cut(rest, "/")
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return u
	}
	out := scheme + "://REDACTED@" + authority[at+1:]
	if slash {
		out += "/" + path
	}
	return out
}
