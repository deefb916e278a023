package artifacts_test

import (
	"strings"
	"testing"

	"github.com/rlsweep/rlsweep/artifacts"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"s3://AKIAKEY:pw-123456@bucket/prefix": "s3://REDACTED@bucket/prefix",
		"https://user:pw-123456@host:9000/x":   "https://REDACTED@host:9000/x",
		"file://user:pw-123456@host":           "file://REDACTED@host",
		"s3://bucket/pre@fix":                  "s3://bucket/pre@fix",
		"file:///data/a@b":                     "file:///data/a@b",
		"/data/user:pw@host":                   "/data/user:pw@host",
		"s3://bucket":                          "s3://bucket",
	} {
		if got := artifacts.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A store URL with a password is refused without repeating the password.
func TestOpenNeverEchoesUserInfo(t *testing.T) {
	for _, u := range []string{"s3://AKIAKEY:pw-123456@bucket/prefix", "s3://pw-123456@bucket", "https://user:pw-123456@host/x",
		"file://user:pw-123456@host/x", "gs://user:pw-123456@bucket"} {
		s, err := artifacts.Open(u)
		if err == nil {
			t.Errorf("Open(%q) = %v, want an error", u, s)
			continue
		}
		if strings.Contains(err.Error(), "pw-123456") || strings.Contains(err.Error(), "AKIAKEY") {
			t.Errorf("Open(%q) error repeats the credentials: %v", u, err)
		}
		if !strings.Contains(err.Error(), "REDACTED@") {
			t.Errorf("Open(%q) error %q does not name the value, redacted", u, err)
		}
	}
}
