package devserver

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeServer writes a script that stands in for the temporal CLI: it counts its starts in a file,
// prints line to stderr and exits 1, as a dev server that cannot bind a port does.
func fakeServer(t *testing.T, line string) (bin, count string) {
	t.Helper()
	dir := t.TempDir()
	bin, count = filepath.Join(dir, "temporal"), filepath.Join(dir, "starts")
	script := "#!/bin/sh\necho start >> " + count + "\necho 'starting' >&2\necho '" + line + "' >&2\necho '   ' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, count
}

func freeTestPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func starts(t *testing.T, count string) int {
	t.Helper()
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start")
}

// TestStartAgainWhenAPortWasTaken: a server that exits during start-up because a port it binds was
// taken is started again, startAttempts times in all, and the error ends with the line that said so;
// a server that exits for another reason is not, and its error ends with its last line.
func TestStartAgainWhenAPortWasTaken(t *testing.T) {
	taken := "listen tcp 127.0.0.1:42871: bind: address already in use"
	bin, count := fakeServer(t, taken)
	_, err := Start(context.Background(), Options{Binary: bin, Port: freeTestPort(t), UIPort: -1, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "exited during start-up") || !strings.HasSuffix(err.Error(), "its log ends: "+taken) {
		t.Errorf("Start: %v, want the start-up error ending with the log's line %q", err, taken)
	}
	if n := starts(t, count); n != startAttempts {
		t.Errorf("started %d times, want %d", n, startAttempts)
	}

	other := "unable to open database file"
	bin, count = fakeServer(t, other)
	_, err = Start(context.Background(), Options{Binary: bin, Port: freeTestPort(t), UIPort: -1, Log: io.Discard})
	if err == nil || !strings.HasSuffix(err.Error(), "its log ends: "+other) {
		t.Errorf("Start: %v, want the error ending with %q", err, other)
	}
	if n := starts(t, count); n != 1 {
		t.Errorf("started %d times for a failure that is not a taken port, want 1", n)
	}
}
