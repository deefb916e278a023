package artifacts_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		url      string
		wantRoot string // "" means an error is wanted
	}{
		{filepath.Join(dir, "plain"), filepath.Join(dir, "plain")},
		{filepath.Join(dir, "plain", "..", "cleaned"), filepath.Join(dir, "cleaned")},
		{"file://" + filepath.Join(dir, "url"), filepath.Join(dir, "url")},
		{"s3://", ""},
		{"s3://Bad_Bucket/x", ""},
		{"s3://bucket/../x", ""},
		{"http://example.com/x", ""},
		{"gs://bucket", ""},
		{"", ""},
		{"file://", ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			s, err := artifacts.Open(tt.url)
			if tt.wantRoot == "" {
				if err == nil {
					t.Fatalf("Open(%q) = %v, want an error", tt.url, s)
				}
				if !strings.Contains(err.Error(), `"`+tt.url+`"`) {
					t.Errorf("Open(%q) error %q does not name the value", tt.url, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.url, err)
			}
			l, ok := s.(*artifacts.Local)
			if !ok {
				t.Fatalf("Open(%q) = %T, want *artifacts.Local", tt.url, s)
			}
			if l.Root() != tt.wantRoot {
				t.Errorf("Open(%q).Root() = %q, want %q", tt.url, l.Root(), tt.wantRoot)
			}
			if err := s.Put(context.Background(), "k", strings.NewReader("v")); err != nil {
				t.Errorf("Put into the opened store: %v", err)
			}
		})
	}
}

func TestOpenS3(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	s, err := artifacts.Open("s3://my-bucket/rl/sweeps-root/")
	if err != nil {
		t.Fatalf("Open(s3://my-bucket/rl/sweeps-root/): %v", err)
	}
	s3, ok := s.(*artifacts.S3)
	if !ok {
		t.Fatalf("Open(s3://…) = %T, want *artifacts.S3", s)
	}
	if s3.Bucket() != "my-bucket" || s3.Prefix() != "rl/sweeps-root" {
		t.Errorf("bucket, prefix = %q, %q, want my-bucket, rl/sweeps-root", s3.Bucket(), s3.Prefix())
	}
	if got, want := s.URL("sweeps/a/plan.json"), "s3://my-bucket/rl/sweeps-root/sweeps/a/plan.json"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
