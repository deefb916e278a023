package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ClosedHTTPArgs close what the dev server would otherwise serve over plain HTTP without
// authentication. The frontend's HTTP API (a JSON gateway to the whole gRPC API, started on a random
// port by the CLI, which cannot turn it off) answers only requests whose Host header matches
// frontend.httpAllowedHosts: the one name allowed is in the reserved .invalid domain, which no DNS
// resolves and so no browser can send, so every request a web page can make (a cross-origin
// text/plain POST needs no CORS preflight) is refused with 403 before it reaches a handler. Nexus,
// whose HTTP endpoints do not check that list, is off: rlsweep uses none. Clients use gRPC.
func ClosedHTTPArgs() []string {
	return []string{"--dynamic-config-value", `frontend.httpAllowedHosts=["` + httpAPIClosedHost + `"]`,
		"--dynamic-config-value", "system.enableNexus=false"}
}

// httpAPIClosedHost is the only Host header the dev server's HTTP API accepts (ClosedHTTPArgs).
const httpAPIClosedHost = "http-api-closed.rlsweep.invalid"

// uiGuard serves the Web UI on the address users open, in front of the UI server the CLI runs on a
// loopback port of its own: the UI server answers any Host header and hands any origin a CSRF token,
// which lets a DNS-rebinding page (a hostile name resolved to 127.0.0.1) drive it. The guard refuses
// (403) a request whose Host is not localhost, 127.0.0.1 or [::1] with the UI's port, and one that
// carries an Origin header other than the UI's own (a cross-origin fetch or form POST); everything else
// passes to the UI server unchanged, its Host included.
type uiGuard struct {
	port  int
	srv   *http.Server
	ln    net.Listener
	proxy *httputil.ReverseProxy
}

// loopbackNames are the host names the Web UI answers to.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

func startUIGuard(ip string, port int, upstream string) (*uiGuard, error) {
	target, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("the Web UI's port %d: %w", port, err)
	}
	g := &uiGuard{port: port, ln: ln}
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the UI server sees the address the browser used
		},
		FlushInterval: -1, // stream responses as they come
	}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// ServeHTTP refuses foreign hosts and origins and proxies the rest.
func (g *uiGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if why := g.refusal(r); why != "" {
		http.Error(w, "rlsweep dev: "+why, http.StatusForbidden)
		return
	}
	g.proxy.ServeHTTP(w, r)
}

// refusal says why r is refused, or "" when it may pass.
func (g *uiGuard) refusal(r *http.Request) string {
	if !g.ownHost(r.Host) {
		return fmt.Sprintf("Host %q refused: the Web UI answers only to localhost:%d, 127.0.0.1:%d or [::1]:%d", r.Host, g.port, g.port, g.port)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Scheme != "http" || !g.ownHost(u.Host) {
			return fmt.Sprintf("Origin %q refused: only pages of the Web UI itself may call it", o)
		}
	}
	return ""
}

// ownHost reports whether hostport names this UI: a loopback name with the UI's port (or no port,
// when the UI is on port 80).
func (g *uiGuard) ownHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		if g.port != 80 {
			return false
		}
		host, port = strings.Trim(hostport, "[]"), "80"
	}
	if port != strconv.Itoa(g.port) {
		return false
	}
	for _, n := range loopbackNames {
		if strings.EqualFold(host, n) {
			return true
		}
	}
	return false
}

func (g *uiGuard) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := g.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = g.srv.Close()
	}
	_ = g.srv.Close()
}

// freeLoopbackPort returns a TCP port free on ip at the time of asking.
func freeLoopbackPort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
