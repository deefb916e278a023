package devserver

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// The guard passes requests for the UI's own loopback address to the UI server, with their Host, and
// refuses foreign hosts (DNS rebinding) and foreign origins (cross-origin fetches and form POSTs).
func TestUIGuard(t *testing.T) {
	var gotHost string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost = r.Host
		_, _ = io.WriteString(w, "ui "+r.Method)
	}))
	defer upstream.Close()
	port, err := freeLoopbackPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	g, err := startUIGuard("127.0.0.1", port, upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	p := strconv.Itoa(port)
	addr := net.JoinHostPort("127.0.0.1", p)
	tests := []struct {
		method, host, origin string
		ok                   bool
	}{
		{"GET", "localhost:" + p, "", true},
		{"GET", "127.0.0.1:" + p, "", true},
		{"GET", "[::1]:" + p, "", true},
		{"POST", "localhost:" + p, "http://localhost:" + p, true},
		{"POST", "127.0.0.1:" + p, "http://127.0.0.1:" + p, true},
		{"GET", "rebind.example:" + p, "", false},
		{"GET", "localhost:1", "", false},
		{"GET", "localhost", "", false},
		{"POST", "localhost:" + p, "http://evil.example", false},
		{"POST", "localhost:" + p, "http://localhost:1", false},
		{"POST", "localhost:" + p, "null", false},
		{"GET", "localhost:" + p, "https://localhost:" + p, false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://"+addr+"/api/v1/x", strings.NewReader("{}"))
		req.Host = tt.host
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		gotHost = ""
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tt.ok {
			if resp.StatusCode != 200 || string(body) != "ui "+tt.method || gotHost != tt.host {
				t.Errorf("%s Host %q Origin %q: %s %q, UI server saw Host %q; want it passed with its Host", tt.method, tt.host, tt.origin, resp.Status, body, gotHost)
			}
			continue
		}
		if resp.StatusCode != http.StatusForbidden || gotHost != "" || !strings.Contains(string(body), "refused") {
			t.Errorf("%s Host %q Origin %q: %s %q (UI server saw %q), want 403 refused before the UI server", tt.method, tt.host, tt.origin, resp.Status, body, gotHost)
		}
	}
}
