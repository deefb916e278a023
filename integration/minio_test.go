//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/devserver"
	"github.com/rlsweep/rlsweep/results"
)

// minioServer is a real MinIO server this test started: the pinned build, a data directory, a port.
type minioServer struct {
	t         testing.TB
	bin, dir  string
	addr      string
	user, key string // root credentials; key is random per test so a leak is unmistakable
	cmd       *exec.Cmd
	log       *os.File
}

// minioBinary returns $RLSWEEP_MINIO_BIN or the pinned build, building it if needed (cached).
func minioBinary(t testing.TB) string {
	if p := os.Getenv("RLSWEEP_MINIO_BIN"); p != "" {
		return p
	}
	out, err := exec.Command("../scripts/install-tools.sh", "minio").Output()
	if err != nil {
		t.Fatalf("scripts/install-tools.sh minio: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func startMinio(t testing.TB) *minioServer {
	t.Helper()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	m := &minioServer{t: t, bin: minioBinary(t), dir: t.TempDir(), addr: freeAddr(t),
		user: "rlsweep-it", key: "secret-" + hex.EncodeToString(b)}
	m.log = logFile(t, filepath.Join(m.dir, "minio.log"))
	m.start()
	t.Cleanup(m.kill)
	return m
}

// start runs the server on m's directory and address and waits until it is live.
func (m *minioServer) start() {
	m.t.Helper()
	m.cmd = exec.Command(m.bin, "server", filepath.Join(m.dir, "data"), "--address", m.addr,
		"--console-address", freeAddr(m.t), "--quiet")
	m.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+m.user, "MINIO_ROOT_PASSWORD="+m.key,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	waitFor(m.t, time.Minute, "MinIO to be live", func() bool {
		resp, err := http.Get("http://" + m.addr + "/minio/health/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// kill stops the server at once (SIGKILL), as a crash or a network partition would look to a client.
func (m *minioServer) kill() {
	if m.cmd != nil && m.cmd.ProcessState == nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}

// useAsAWS points this process and the processes it starts at the server, through the variables a
// real deployment sets: the credential chain's AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_REGION and
// AWS_ENDPOINT_URL_S3 (no path-style variable: an endpoint URL turns it on). Shared config files are
// pointed away so a developer's ~/.aws cannot leak in.
func (m *minioServer) useAsAWS(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": m.user, "AWS_SECRET_ACCESS_KEY": m.key, "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_S3": "http://" + m.addr, "AWS_ENDPOINT_URL": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(m.dir, "no-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(m.dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", artifacts.EnvS3PathStyle: "",
	} {
		t.Setenv(k, v)
	}
}

// rawClient is a plain SDK client on the server, for what the store does not offer (creating the
// bucket, listing the whole bucket, multipart uploads in progress).
func (m *minioServer) rawClient(t testing.TB) *s3.Client {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

// s3Env is an env whose workers and CLI use an S3 store on a real MinIO.
type s3Env struct {
	*env
	minio *minioServer
	url   string
	s3    *artifacts.S3
	raw   *s3.Client
}

const itBucket = "rlsweep-it"

// newS3Env starts MinIO, then the dev server (so cleanup stops the workers before MinIO), creates the
// bucket and opens the store at s3://rlsweep-it/<prefix>.
func newS3Env(t *testing.T, prefix string) *s3Env {
	t.Helper()
	m := startMinio(t)
	m.useAsAWS(t)
	return s3EnvOn(t, newEnv(t), m, prefix)
}

// newKillableS3Env is newS3Env on a dev server the test can SIGKILL, restart and freeze (devserver.Server).
func newKillableS3Env(t *testing.T, prefix string) (*s3Env, *devserver.Server) {
	t.Helper()
	m := startMinio(t)
	m.useAsAWS(t)
	e, srv := newKillableEnv(t)
	return s3EnvOn(t, e, m, prefix), srv
}

// s3EnvOn creates the bucket on m and opens the store at s3://rlsweep-it/<prefix> for e.
func s3EnvOn(t *testing.T, env *env, m *minioServer, prefix string) *s3Env {
	t.Helper()
	e := &s3Env{env: env, minio: m, url: "s3://" + itBucket + "/" + prefix, raw: m.rawClient(t)}
	if _, err := e.raw.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(itBucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	s, err := artifacts.NewS3(context.Background(), e.url)
	if err != nil {
		t.Fatal(err)
	}
	e.s3 = s
	return e
}

// startWorker starts a worker process on the S3 store (the last --store wins).
func (e *s3Env) startWorker(name string, args ...string) *exec.Cmd {
	e.t.Helper()
	return e.env.startWorker(name, append([]string{"--store", e.url}, args...)...)
}

// submit submits on the S3 store (the last --store wins) and returns the sweep ID.
func (e *s3Env) submit(args ...string) string {
	e.t.Helper()
	return e.env.submit(append(args, "--store", e.url)...)
}

// get returns an object's bytes from the S3 store.
func (e *s3Env) get(key string) []byte {
	e.t.Helper()
	rc, err := e.s3.Get(context.Background(), key)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		e.t.Fatalf("read %s: %v", key, err)
	}
	return b
}

// results reads a finished sweep's results.json from S3.
func (e *s3Env) results(sweepID string) results.SweepResults {
	e.t.Helper()
	var res results.SweepResults
	if err := json.Unmarshal(e.get(artifacts.ResultsKey(sweepID)), &res); err != nil {
		e.t.Fatal(err)
	}
	return res
}
