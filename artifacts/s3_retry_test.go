package artifacts

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// warnLog records what a store logs.
type warnLog struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (l *warnLog) Warn(msg string, keyvals ...any) {
	m := map[string]any{"msg": msg}
	for i := 0; i+1 < len(keyvals); i += 2 {
		m[fmt.Sprint(keyvals[i])] = keyvals[i+1]
	}
	l.mu.Lock()
	l.lines = append(l.lines, m)
	l.mu.Unlock()
}

func (l *warnLog) all() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.lines...)
}

// s3At opens an S3 store whose endpoint is addr, logging to a new warnLog.
func s3At(t *testing.T, addr string) (*S3, *warnLog) {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
	t.Setenv("AWS_ACCESS_KEY_ID", "rlsweep-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "rlsweep-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	l := &warnLog{}
	s, err := NewS3(context.Background(), "s3://bucket/team", WithLogger(l))
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

// refusedAddr is a local address nothing listens on: connecting is refused at once.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// blackholeAddr is a local address whose SYNs go unanswered, as behind a partition: a listening
// socket whose accept queue (backlog 0) is full and never drained, so the kernel drops new SYNs.
func blackholeAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue; the first connect that does not complete within a second proves it full.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
		if i == 16 {
			t.Skip("the kernel accepts connections beyond a full backlog here: no local blackhole")
		}
	}
	return addr
}

// TestS3LogsRetriedRequests: every failed attempt that the retryer retries is logged with the
// operation, the bucket and key, the attempt number and the error.
func TestS3LogsRetriedRequests(t *testing.T) {
	s, l := s3At(t, refusedAddr(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := s.Get(ctx, "sweeps/a/plan.json"); err == nil {
		t.Fatal("Get from a refused endpoint succeeded")
	}
	lines := l.all()
	if len(lines) < 2 {
		t.Fatalf("logged %d retries in 3 s against a refused endpoint, want at least 2: %v", len(lines), lines)
	}
	for i, m := range lines {
		if m["operation"] != "GetObject" || m["bucket"] != "bucket" || m["key"] != "team/sweeps/a/plan.json" ||
			m["attempt"] != i+1 || m["max_attempts"] != s3MaxAttempts || !strings.Contains(fmt.Sprint(m["error"]), "connection refused") {
			t.Errorf("retry log line %d = %v, want operation GetObject, bucket bucket, key team/sweeps/a/plan.json, attempt %d of %d, a connection refused error",
				i+1, m, i+1, s3MaxAttempts)
		}
	}

	// A listing and an upload too, each with what it is about.
	l.lines = nil
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := s.List(ctx, "sweeps/"); err == nil {
		t.Fatal("List from a refused endpoint succeeded")
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.Put(ctx, "sweeps/b/x", strings.NewReader("x")); err == nil {
		t.Fatal("Put to a refused endpoint succeeded")
	}
	var ops []string
	for _, m := range l.all() {
		ops = append(ops, fmt.Sprint(m["operation"], " ", m["key"]))
	}
	got := strings.Join(ops, ", ")
	if !strings.Contains(got, "ListObjectsV2 team/sweeps/") || !strings.Contains(got, "PutObject team/sweeps/b/x") {
		t.Errorf("retries logged: %s; want ListObjectsV2 team/sweeps/ and PutObject team/sweeps/b/x among them", got)
	}
}

// TestS3ConnectTimeout: an endpoint that never answers a SYN fails each attempt after the connect
// timeout, which the retryer logs and retries, instead of holding the call silent for the HTTP client's
// default of 30 s per attempt.
func TestS3ConnectTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for connect timeouts")
	}
	s, l := s3At(t, blackholeAddr(t))
	ctx, cancel := context.WithTimeout(context.Background(), s3ConnectTimeout+3*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := s.Get(ctx, "plan.json"); err == nil {
		t.Fatal("Get from a blackholed endpoint succeeded")
	}
	lines := l.all()
	if len(lines) < 1 {
		t.Fatalf("logged %d retries in %s against an endpoint that drops SYNs, want at least 1 (connect timeout %s): %v",
			len(lines), time.Since(start).Round(100*time.Millisecond), s3ConnectTimeout, lines)
	}
	if e := fmt.Sprint(lines[0]["error"]); !strings.Contains(e, "timeout") || lines[0]["operation"] != "GetObject" {
		t.Errorf("first retry logged %v, want GetObject with a connect timeout", lines[0])
	}
}
