//go:build integration

package integration

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/workflows"
)

// A dev server whose state predates some of rlsweep's search attributes (the CLI registers its
// --search-attribute flags only when it creates its database) is brought up to date by
// EnsureSearchAttributes: the missing ones are added with their types, a second call adds nothing, and
// an attribute registered with another type is an error rather than a silent mismatch.
func TestEnsureSearchAttributes(t *testing.T) {
	host, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	old := temporal.NewSearchAttributes(workflows.AttrSweepID.ValueSet("")) // an early rlsweep's state
	srv, err := devserver.Start(ctx, devserver.Options{IP: host, Port: p, UIPort: -1, SearchAttributes: old})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Addr, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var want []string
	for k := range workflows.SearchAttributes().GetUntypedValues() {
		if k.GetName() != workflows.AttrSweepID.GetName() {
			want = append(want, k.GetName())
		}
	}
	sort.Strings(want)
	added, err := devserver.EnsureSearchAttributes(ctx, c, "default", workflows.SearchAttributes())
	if err != nil || !slices.Equal(added, want) {
		t.Fatalf("EnsureSearchAttributes added %q, %v; want %q", added, err, want)
	}
	if again, err := devserver.EnsureSearchAttributes(ctx, c, "default", workflows.SearchAttributes()); err != nil || len(again) != 0 {
		t.Errorf("second call added %q, %v; want nothing", again, err)
	}
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for k := range workflows.SearchAttributes().GetUntypedValues() {
		if got := have.GetCustomAttributes()[k.GetName()]; got != enumspb.IndexedValueType(k.GetValueType()) {
			t.Errorf("%s registered as %s, want %s", k.GetName(), got, k.GetValueType())
		}
	}
	clash := temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyInt64(workflows.AttrKind.GetName()).ValueSet(0))
	if _, err := devserver.EnsureSearchAttributes(ctx, c, "default", clash); err == nil {
		t.Errorf("RlsweepKind wanted as Int while registered as Keyword: got no error")
	} else {
		t.Logf("type clash: %v", err)
	}
}

// `rlsweep dev FILE --exit` runs a sweep end to end on the server it starts, even from a shell set up
// for Temporal Cloud: the environment's API key, TLS and namespace are for other servers, not the
// local one it dials plainly (they made it fail with a TLS handshake error, or "namespace not found").
// The key appears nowhere in what it prints.
func TestDevIgnoresCloudSettings(t *testing.T) {
	dir := t.TempDir()
	port, uiPort := freePort(t), freePort(t)
	e := &env{t: t, dir: dir}
	spec := e.spec("devcloud", `
  total_steps: 2000
seeds: [1, 2]
parameters:
  sleep_ms: {value: 1}
probes: {enabled: false}
concurrency: 2
`)
	const key = "rlsweep-test-api-key-do-not-print"
	cmd := exec.Command(rlsweepBin, "dev", "--exit", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--state-dir", filepath.Join(dir, "state"), "--store", filepath.Join(dir, "artifacts"), spec)
	cmd.Env = append(os.Environ(), "RLSWEEP_HOME="+filepath.Join(dir, "home"), "TEMPORAL_API_KEY="+key,
		"TEMPORAL_TLS=true", "TEMPORAL_NAMESPACE=prod-ns", "TEMPORAL_ADDRESS=prod.tmprl.cloud:7233")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rlsweep dev: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "completed: 2 trials (2 completed)") {
		t.Errorf("dev output lacks the finished sweep:\n%s", out)
	}
	if strings.Contains(string(out), key) {
		t.Errorf("dev printed the API key:\n%s", out)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
