package main

import (
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
)

// TestGRPCCompression: --grpc-compression auto compresses the requests except to a loopback address;
// gzip and none are taken as said; anything else is invalid input naming the flag and the choices.
func TestGRPCCompression(t *testing.T) {
	for _, c := range []struct {
		mode, addr string
		gzip       bool
	}{
		{"auto", "", false}, // the SDK's default address, localhost:7233
		{"auto", "localhost:7233", false},
		{"auto", "LOCALHOST:7233", false},
		{"auto", "127.0.0.1:7233", false},
		{"auto", "127.8.9.10:7233", false},
		{"auto", "[::1]:7233", false},
		{"auto", "10.0.0.2:7233", true},
		{"auto", "temporal.example.com:7233", true},
		{"auto", "my-ns.a1b2c.tmprl.cloud:7233", true},
		{"", "127.0.0.1:7233", false},
		{"gzip", "127.0.0.1:7233", true},
		{"none", "temporal.example.com:7233", false},
	} {
		got, err := grpcCompression(c.mode, c.addr)
		if err != nil {
			t.Fatalf("grpcCompression(%q, %q): %v", c.mode, c.addr, err)
		}
		_, gzip := got.(*client.GrpcCompressionGzip)
		_, none := got.(*client.GrpcCompressionNone)
		if gzip != c.gzip || none == c.gzip {
			t.Errorf("grpcCompression(%q, %q) = %T, want gzip %v", c.mode, c.addr, got, c.gzip)
		}
	}
	code, stdout, stderr := runCLI(t, "--grpc-compression", "zstd", "--address", "127.0.0.1:1", "list")
	if code != exitInvalid || stdout != "" {
		t.Errorf("--grpc-compression zstd: exit %d, stdout %q; want exit %d and nothing on stdout", code, stdout, exitInvalid)
	}
	for _, want := range []string{"--grpc-compression", `"zstd"`, "auto, gzip or none"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--grpc-compression zstd: stderr %q does not name %s", stderr, fmt.Sprint(want))
		}
	}
}
