package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsweep/rlsweep/artifacts"
)

// rlsweep logs reads a trial's attempt logs from a local store without the user knowing the layout:
// by default the last attempt of the last segment, its parts in order; --segment, --attempt and --all
// pick others; a segment or attempt with no stored log is refused naming what is stored.
func TestLogsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	store, err := artifacts.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const sweep = "sweep/cartpole/1e114cb9"
	put := func(seg int, att int32, parts ...string) {
		for i, p := range parts {
			if err := store.Put(context.Background(), artifacts.LogPartKey(sweep, "0-s1", seg, att, i), strings.NewReader(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 1, "seg0 a1\n")
	put(1, 1, "seg1 a1 crashed\n")
	// Eleven parts: they are read in numeric order, not as listed.
	put(1, 2, "p0\n", "p1\n", "p2\n", "p3\n", "p4\n", "p5\n", "p6\n", "p7\n", "p8\n", "p9\n", "p10\n")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, "p0\np1\np2\np3\np4\np5\np6\np7\np8\np9\np10\n"},
		{[]string{"--segment", "1", "--attempt", "1"}, 0, "seg1 a1 crashed\n"},
		{[]string{"--segment", "0"}, 0, "seg0 a1\n"},
		{[]string{"--all", "--segment", "1"}, 0, "==> segment 1 attempt 1 (" + store.URL(artifacts.LogDir(sweep, "0-s1", 1, 1)) + ") <==\nseg1 a1 crashed\n==> segment 1 attempt 2"},
		{[]string{"--segment", "4"}, 2, "--segment: got 4, want one of 0, 1"},
		{[]string{"--segment", "0", "--attempt", "3"}, 2, "--attempt: got 3, want one of 1 (the stored attempts of segment 0)"},
		{[]string{"--attempt", "-1"}, 2, "--attempt: got -1, want an attempt number ≥ 1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"--store", dir, "logs", "cartpole/1e114cb9/0-s1"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, output %q, stderr %q; want exit %d with %q", code, out, errOut, tt.code, tt.want)
			}
		})
	}
	all := func() string {
		_, out, _ := runCLI(t, "--store", dir, "logs", "cartpole/1e114cb9/0-s1", "--all")
		return out
	}()
	if strings.Count(all, "==> segment") != 3 || strings.Index(all, "seg0 a1") > strings.Index(all, "seg1 a1") {
		t.Errorf("--all = %q, want the three attempts in order, each after a header", all)
	}
	if code, _, errOut := runCLI(t, "--store", dir, "logs", "cartpole/1e114cb9"); code != 2 || !strings.Contains(errOut, "want SWEEP/TRIAL") {
		t.Errorf("logs without a trial: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "--store", dir, "logs", "cartpole/1e114cb9/9-s9"); code != 1 || !strings.Contains(errOut, "want one of its 1 trials with stored files: 0-s1") {
		t.Errorf("logs of a trial the sweep does not have: exit %d, %q", code, errOut)
	}
}

// rlsweep logs against an S3 endpoint that accepts connections and never answers gives up after
// --timeout with exit 1 and an error naming the store and the flag, instead of hanging.
func TestLogsStoreNotAnswering(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+ln.Addr().String())
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("RLSWEEP_S3_PATH_STYLE", "1")
	done := make(chan struct{})
	var code int
	var errOut string
	start := time.Now()
	go func() {
		defer close(done)
		code, _, errOut = runCLI(t, "--store", "s3://silent-bucket/artifacts", "logs", "cartpole/ab12cd34/0-s1", "--timeout", "1s")
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("logs still waiting 30 s into a store outage with --timeout 1s")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("logs gave up after %s, want about 1s (--timeout 1s)", took.Round(100*time.Millisecond))
	}
	want := "artifact store s3://silent-bucket/artifacts/sweeps/cartpole/ab12cd34/trials/0-s1/logs/ did not answer within 1s reading trial 0-s1's logs (raise it with --timeout"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want exit 1 with %q", code, errOut, want)
	}
	if code, _, errOut := runCLI(t, "--store", t.TempDir(), "logs", "cartpole/ab12cd34/0-s1", "--timeout", "0s"); code != 2 || !strings.Contains(errOut, "--timeout: got 0s, want a positive duration") {
		t.Errorf("--timeout 0s: exit %d, stderr %q; want exit 2 naming --timeout", code, errOut)
	}
}
