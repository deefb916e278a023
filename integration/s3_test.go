//go:build integration

package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/results"
)

// The S3 store on a real MinIO, reached only through AWS_ENDPOINT_URL_S3 (which proves the SDK honours
// it) with path style switched on by the endpoint alone (MinIO has no virtual-host buckets here).
func TestS3Store(t *testing.T) {
	e := newS3Env(t, "team/rlsweep")
	ctx := context.Background()
	s := e.s3

	t.Run("put get not-found", func(t *testing.T) {
		if err := s.Put(ctx, "a/b.txt", strings.NewReader("hello")); err != nil {
			t.Fatal(err)
		}
		if got := string(e.get("a/b.txt")); got != "hello" {
			t.Errorf("Get(a/b.txt) = %q, want hello", got)
		}
		if _, err := s.Get(ctx, "a/missing"); !errors.Is(err, artifacts.ErrNotFound) {
			t.Errorf("Get(a/missing) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("multipart", func(t *testing.T) {
		big := bytes.Repeat([]byte("0123456789abcdef"), (artifacts.MultipartThreshold*5/2)/16) // 2.5 parts
		if err := s.Put(ctx, "big/ckpt.bin", bytes.NewReader(big)); err != nil {
			t.Fatal(err)
		}
		if got, want := sha256.Sum256(e.get("big/ckpt.bin")), sha256.Sum256(big); got != want {
			t.Errorf("multipart object checksum %x, want %x", got, want)
		}
		head, err := e.raw.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(itBucket), Key: aws.String("team/rlsweep/big/ckpt.bin")})
		if err != nil {
			t.Fatal(err)
		}
		if etag := aws.ToString(head.ETag); !strings.Contains(etag, "-3") {
			t.Errorf("ETag %s, want a multipart ETag of 3 parts (…-3)", etag)
		}
	})

	t.Run("atomic", func(t *testing.T) { checkAtomicPut(t, e) })
	t.Run("aborted upload leaves nothing", func(t *testing.T) { checkAbortedPut(t, e) })
	t.Run("list paginates", func(t *testing.T) { checkListPages(t, e) })
	t.Run("hostile keys", func(t *testing.T) { checkHostileKeys(t, e) })
}

// checkAtomicPut overwrites a 40 MiB multipart object while readers fetch it: every read sees one whole
// version, never a mix or a part, and no temporary object ever shows under the prefix.
func checkAtomicPut(t *testing.T, e *s3Env) {
	ctx := context.Background()
	size := artifacts.MultipartThreshold*2 + 1<<20
	versions := [][]byte{bytes.Repeat([]byte{'A'}, size), bytes.Repeat([]byte{'B'}, size)}
	sums := map[[32]byte]bool{sha256.Sum256(versions[0]): true, sha256.Sum256(versions[1]): true}
	if err := e.s3.Put(ctx, "atomic/x", bytes.NewReader(versions[0])); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 1; i <= 3; i++ {
			if err := e.s3.Put(ctx, "atomic/x", bytes.NewReader(versions[i%2])); err != nil {
				t.Error(err)
			}
		}
	}()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		if got := sha256.Sum256(e.get("atomic/x")); !sums[got] {
			t.Fatalf("read %d saw a partial or mixed object (checksum %x)", reads, got)
		}
		keys, err := e.s3.List(ctx, "atomic/")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] != "atomic/x" {
			t.Fatalf("List(atomic/) = %v during an upload, want only atomic/x", keys)
		}
	}
	wg.Wait()
	t.Logf("%d whole reads during 3 overwrites of a %d MiB object", reads, size>>20)
}

// checkAbortedPut cancels a multipart upload midway: the old object stays, and no upload or part is
// left behind in the bucket.
func checkAbortedPut(t *testing.T, e *s3Env) {
	if err := e.s3.Put(context.Background(), "abort/x", strings.NewReader("old")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte{'z'}, 1<<20)
		for i := 0; i < artifacts.MultipartThreshold>>20+4; i++ { // past the first part
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		cancel() // the writer stops midway, as a dying worker would
		pw.CloseWithError(context.Canceled)
	}()
	if err := e.s3.Put(ctx, "abort/x", pr); err == nil {
		t.Fatal("Put with a cancelled context succeeded, want an error")
	}
	if got := string(e.get("abort/x")); got != "old" {
		t.Errorf("after an aborted Put, Get = %d bytes, want the old object", len(got))
	}
	waitFor(t, 30*time.Second, "the aborted multipart upload to be gone", func() bool {
		out, err := e.raw.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(itBucket)})
		return err == nil && len(out.Uploads) == 0
	})
}

// checkListPages stores more keys than one ListObjectsV2 page holds (1,000).
func checkListPages(t *testing.T, e *s3Env) {
	const n = 1050
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := e.s3.Put(context.Background(), fmt.Sprintf("many/part-%06d.json", i), strings.NewReader("{}")); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	keys, err := e.s3.List(context.Background(), "many/part-")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != n || keys[0] != "many/part-000000.json" || keys[n-1] != fmt.Sprintf("many/part-%06d.json", n-1) {
		t.Errorf("List(many/part-) = %d keys (%v … %v), want %d in order", len(keys), keys[:1], keys[len(keys)-1:], n)
	}
}

// checkHostileKeys writes under keys built from hostile sweep names and parameter values and refuses
// hostile raw keys; then every object in the whole bucket must lie under the store's prefix.
func checkHostileKeys(t *testing.T, e *s3Env) {
	ctx := context.Background()
	names := []string{"../../etc", "/etc/passwd", "a\x1b[31mred", "ｐａｓｓｗｄ", "\u202e..\u202c", "x\u2215..\u2215y", ".."}
	for _, n := range names {
		for _, k := range []string{artifacts.PlanKey("sweep/" + n + "/ab12"), artifacts.MetricsPartKey("sweep/x/"+n, n+"-s1", 0, 1, 0)} {
			if err := e.s3.Put(ctx, k, strings.NewReader("x")); err != nil {
				t.Errorf("Put(%q) from hostile name %q: %v", k, n, err)
			}
		}
	}
	for _, k := range []string{"../../etc/passwd", "/etc/passwd", "a/../../b", "..", "a\x00b", "a\\..\\b", "a/\u200b/b", "//x"} {
		if err := e.s3.Put(ctx, k, strings.NewReader("x")); err == nil {
			t.Errorf("Put(%q) succeeded, want a refusal", k)
		}
	}
	p := s3.NewListObjectsV2Paginator(e.raw, &s3.ListObjectsV2Input{Bucket: aws.String(itBucket)})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			n++
			if k := aws.ToString(o.Key); !strings.HasPrefix(k, "team/rlsweep/") || strings.Contains(k, "..") && strings.Contains("/"+k+"/", "/../") {
				t.Errorf("object %q lies outside team/rlsweep/", k)
			}
		}
	}
	if n < 2*len(names) {
		t.Errorf("bucket holds %d objects, want at least the %d written", n, 2*len(names))
	}
}

// A sweep run against S3 leaves the secret key in no workflow history: neither the sweep's nor any
// trial's, in any run.
func TestCredentialsNeverInHistory(t *testing.T) {
	e := newS3Env(t, "creds")
	e.startWorker("a", "--slots", "2")
	spec := e.spec("creds", `
  total_steps: 4000
  segment_steps: 2000
method: grid
seeds: [1, 2]
parameters:
  lr: {values: [1.0e-3, 3.0e-3]}
  label: {value: "../../etc/\u202epasswd"}
  checkpoint_every: {value: 1}
probes: {enabled: false}
concurrency: 4
`)
	sweepID := e.submit(spec, "--watch")
	res := e.results(sweepID)
	if len(res.Trials) != 4 {
		t.Fatalf("results.json has %d trials, want 4", len(res.Trials))
	}
	var all strings.Builder
	runs := e.sweepHistories(t, sweepID)
	for _, r := range runs {
		all.WriteString(r.History)
	}
	if len(runs) < 1+len(res.Trials) {
		t.Fatalf("found %d workflow runs for %s, want the sweep and its %d trials", len(runs), sweepID, len(res.Trials))
	}
	h := all.String()
	if !strings.Contains(h, sweepID) || !strings.Contains(h, "checkpoints/ckpt-") {
		t.Fatalf("the exported histories (%d bytes) lack the sweep ID or a checkpoint key: the search would prove nothing", len(h))
	}
	if strings.Contains(h, e.minio.key) {
		t.Errorf("a workflow history of %s holds the secret access key", sweepID)
	}
	if strings.Contains(h, "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("a workflow history of %s names AWS_SECRET_ACCESS_KEY", sweepID)
	}
	t.Logf("searched %d runs, %d bytes of history: no secret", len(runs), len(h))
	for _, tr := range res.Trials {
		if tr.Outcome != results.OutcomeCompleted {
			t.Errorf("trial %s: %s, want completed", tr.TrialID, tr.Outcome)
		}
	}
}
