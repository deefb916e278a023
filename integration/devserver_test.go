//go:build integration

package integration

import (
	"context"
	"net"
	"slices"
	"sort"
	"strconv"
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
