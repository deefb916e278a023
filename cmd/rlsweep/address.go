package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"
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
