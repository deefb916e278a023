//go:build integration

package integration

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// `rlsweep results` against an S3 endpoint that accepts connections and never answers: it says on
// stderr that it waits for the store, and gives up after its default timeout (30 s) with exit 1 and an
// error naming the store, instead of hanging.
func TestResultsStoreNotAnswering(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, rlsweepBin, "--store", "s3://silent-bucket/artifacts", "results", "cartpole/ab12cd34")
	cmd.Env = append(cmd.Environ(), "AWS_ENDPOINT_URL_S3=http://"+ln.Addr().String(), "AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test-secret", "AWS_REGION=us-east-1", "RLSWEEP_S3_PATH_STYLE=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("results still running after %s against a store that does not answer; stderr:\n%s", took.Round(time.Second), errOut.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("results exited %d (%v), want 1", code, err)
	}
	if took > 40*time.Second {
		t.Errorf("results took %s to give up, want about 30s", took.Round(time.Second))
	}
	stderr := errOut.String()
	for _, want := range []string{"waiting for the artifact store s3://silent-bucket/artifacts/sweeps/cartpole/ab12cd34", "did not answer within 30s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	t.Logf("results gave up after %s:\n%s", took.Round(100*time.Millisecond), stderr)
}
