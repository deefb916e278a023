package artifacts

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseS3URL(t *testing.T) {
	tests := []struct {
		url, bucket, prefix string
		ok                  bool
	}{
		{"s3://bucket", "bucket", "", true},
		{"s3://bucket/", "bucket", "", true},
		{"s3://bucket/a/b/", "bucket", "a/b", true},
		{"s3://my.bucket-1/rlsweep", "my.bucket-1", "rlsweep", true},
		{"s3://", "", "", false},
		{"s3://b/x", "", "", false},          // too short
		{"s3://Bucket/x", "", "", false},     // upper case
		{"s3://bucket/../x", "", "", false},  // leaves the bucket's prefix
		{"s3://bucket//x", "", "", false},    // empty segment
		{"s3://bucket/a/./b", "", "", false}, // dot segment
		{"s3://bucket/a\x00b", "", "", false},
		{"s3://bucket/a\\..\\b", "", "", false},
		{"s3://AKIA:secret@bucket/x", "", "", false},
		{"s3://bucket:9000/x", "", "", false},
		{"http://bucket/x", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			bucket, prefix, err := ParseS3URL(tt.url)
			if !tt.ok {
				if err == nil {
					t.Fatalf("ParseS3URL(%q) = %q, %q, nil, want an error", tt.url, bucket, prefix)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("ParseS3URL error %q repeats the credentials", err)
				}
				return
			}
			if err != nil || bucket != tt.bucket || prefix != tt.prefix {
				t.Errorf("ParseS3URL(%q) = %q, %q, %v, want %q, %q, nil", tt.url, bucket, prefix, err, tt.bucket, tt.prefix)
			}
		})
	}
}

// hostileKeys are keys that try to leave the prefix: parent references, absolute paths, backslashes,
// control characters, invisible and look-alike characters (fullwidth solidus, one-dot leader, division
// slash), and the keys built from hostile sweep names and parameter values.
var hostileKeys = []string{
	"../../etc/passwd", "/etc/passwd", "a/../../b", "..", ".", "a//b", "a/", "..\\..\\etc", "a\x00b",
	"a\nb", "a\u202e/..", "\u200b../x", "a/\ufeff../b", "a/\u2024\u2024/b", "a\uff0f..\uff0fb",
	"\u2215etc\u2215passwd", "sweeps/../../x", "sweeps/a/./b", "\xc0\xae\xc0\xae/x",
}

// TestS3KeysStayUnderPrefix checks every key the S3 store would touch, for hostile input: rejected, or
// an object key under the prefix that survives path cleaning as it is.
func TestS3KeysStayUnderPrefix(t *testing.T) {
	s := &S3{bucket: "bucket", prefix: "team/rlsweep"}
	var keys []string
	keys = append(keys, hostileKeys...)
	for _, name := range []string{"../../etc", "/abs/path", "a\x07b", "ｆｏｏ", "sweep/../..", "\u202e..", "x\u2215..\u2215y"} {
		for _, value := range []string{"../../../root", "/", "\u0000", "..\u2044..", "3e-4"} {
			keys = append(keys, CheckpointKey("sweep/"+name+"/ab12", name+"-"+value, value),
				PlanKey("sweep/"+name+"/"+value), TrialDir(name, value)+"/metrics.jsonl")
		}
	}
	for _, key := range keys {
		k, err := s.objectKey(key)
		if err != nil {
			if err := s.Put(context.Background(), key, strings.NewReader("x")); err == nil {
				t.Errorf("Put(%q) accepted a key objectKey refuses", key)
			}
			continue
		}
		if !strings.HasPrefix(k, "team/rlsweep/") || hasDotSegment(k) {
			t.Errorf("objectKey(%q) = %q, want a key under team/rlsweep/ with no . or .. segment", key, k)
		}
		if !strings.HasPrefix(s.URL(key), "s3://bucket/team/rlsweep/") {
			t.Errorf("URL(%q) = %q, want it under s3://bucket/team/rlsweep/", key, s.URL(key))
		}
	}
}

func hasDotSegment(k string) bool {
	for _, seg := range strings.Split(k, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	return strings.ContainsAny(k, "\\\x00")
}

func TestS3ListRejectsEscapingPrefix(t *testing.T) {
	s := &S3{bucket: "bucket", prefix: "p"}
	for _, prefix := range []string{"../", "..", "/x", "a/../../", "a\\b"} {
		if _, err := s.List(context.Background(), prefix); err == nil {
			t.Errorf("List(%q) = nil error, want a refusal", prefix)
		}
	}
}

// TestRetryBudget checks the backoff a 30 s outage relies on: whatever the jitter, the 19 sleeps of
// s3MaxAttempts attempts add up to at least 63 s (and at most 128 s).
func TestRetryBudget(t *testing.T) {
	j := equalJitter{base: s3BaseBackoff, max: s3MaxBackoff}
	for trial := 0; trial < 100; trial++ {
		var total time.Duration
		for attempt := 1; attempt < s3MaxAttempts; attempt++ {
			d, err := j.BackoffDelay(attempt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d > s3MaxBackoff {
				t.Fatalf("BackoffDelay(%d) = %s, want at most %s", attempt, d, s3MaxBackoff)
			}
			total += d
		}
		if total < 63*time.Second || total > 128*time.Second {
			t.Fatalf("total backoff over %d attempts = %s, want between 63 s and 128 s", s3MaxAttempts, total)
		}
	}
}
