package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"go.temporal.io/sdk/client"
)

// The ports a Temporal dev server listens on by default: the frontend's gRPC API (what --address
// names) and the Web UI's HTTP.
const (
	frontendPort = "7233"
	webUIPort    = "8233"
)

// checkAddress rejects a Temporal address that is a URL rather than the frontend's host:port, naming
// where it came from (--address or TEMPORAL_ADDRESS) and the host:port to give instead.
func checkAddress(source, addr string) error {
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		return nil
	}
	what := "a URL"
	if s := strings.ToLower(scheme); s == "http" || s == "https" {
		what = "an HTTP URL"
	}
	host, port := strings.TrimSuffix(rest, "/"), ""
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		host, port = u.Hostname(), u.Port()
	}
	fix := setting(source, net.JoinHostPort(host, frontendPort))
	switch {
	case port == webUIPort:
		fix += " (" + webUIPort + " is the Web UI's port)"
	case port != "":
		fix = setting(source, net.JoinHostPort(host, port))
	}
	return invalidInput(fmt.Errorf("%s: got %q, %s; want the Temporal frontend's gRPC address as host:port, without a scheme (default localhost:%s): %s",
		source, addr, what, frontendPort, fix))
}

// speaksHTTP1 tells a dial error from a server that answered gRPC's HTTP/2 preface in HTTP/1.1: a web
// server, such as the Temporal Web UI, rather than the frontend.
func speaksHTTP1(err error) bool {
	return err != nil && strings.Contains(err.Error(), "HTTP/1.1 header")
}

// webUIAddress is the error for a Temporal address that answers HTTP/1.1: most likely the Web UI.
func webUIAddress(source, addr string) error {
	what, fix := "a web server (such as the Temporal Web UI)", "the frontend's host:port"
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if port == webUIPort {
			what = "the Temporal Web UI's port"
		}
		if port != frontendPort {
			fix = setting(source, net.JoinHostPort(host, frontendPort))
		}
	}
	return fmt.Errorf("%s: got %q, which answers HTTP/1.1: %s, not the Temporal frontend; want the frontend's gRPC host:port (default localhost:%s; rlsweep dev --port sets it): %s",
		source, addr, what, frontendPort, fix)
}

// setting is how to set source to value: a flag, an environment variable or the profile's address.
func setting(source, value string) string {
	switch {
	case strings.HasPrefix(source, "--"):
		return source + " " + value
	case source == "TEMPORAL_ADDRESS":
		return source + "=" + value
	}
	return "set it to " + value + " (or give --address " + value + ")"
}

// grpcCompression is the compression of the client's requests to the Temporal frontend at addr
// (host:port; "" is the SDK's default, localhost:7233) for --grpc-compression mode: gzip, none, or
// auto, which is gzip except to a loopback address, where compressing every poll, heartbeat and
// completion costs CPU on both ends of a connection that never leaves the machine.
func grpcCompression(mode, addr string) (client.GrpcCompression, error) {
	switch mode {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "auto", "":
		if addr == "" {
			addr = client.DefaultHostPort
		}
		if loopback(addr) {
			return &client.GrpcCompressionNone{}, nil
		}
		return &client.GrpcCompressionGzip{}, nil
	}
	return nil, invalidInput(fmt.Errorf("--grpc-compression: got %q, want auto, gzip or none (auto compresses except to a loopback address)", mode))
}

// loopback says whether the host of addr (host:port) is this machine's loopback: localhost, 127.0.0.0/8
// or ::1. A name other than localhost is not resolved: it counts as remote.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
