package compose

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/spf13/pflag"

	"github.com/rlsweep/rlsweep/workflows"
)

// Service names the checks below rely on.
const (
	svcTemporal = "temporal"
	svcUI       = "temporal-ui"
	svcAttrs    = "temporal-search-attributes"
	svcMinio    = "minio"
	svcBucket   = "minio-bucket"
	svcControl  = "rlsweep-control"
	svcGPU      = "rlsweep-gpu"
)

var root = filepath.Join("..", "..")

// credentials are the variables docker-compose.yml requires (it ships no default credentials), with
// values for the tests.
var credentials = []string{"MINIO_ROOT_USER=test-minio-user", "MINIO_ROOT_PASSWORD=test-minio-password",
	"POSTGRES_PASSWORD=test-postgres-password"}

// load reads docker-compose.yml as `docker compose` would, with only the required credentials in the
// environment so that every ${VAR:-default} takes its default.
func load(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadWith(credentials)
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

// loadWith reads docker-compose.yml with environ as the whole environment.
func loadWith(environ []string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithEnv(environ))
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return s
}

func env(s types.ServiceConfig, key string) string {
	if v := s.Environment[key]; v != nil {
		return *v
	}
	return ""
}

// published returns the host port that publishes the container port target, or "".
func published(s types.ServiceConfig, target uint32) string {
	for _, p := range s.Ports {
		if p.Target == target {
			return p.Published
		}
	}
	return ""
}

func TestPublishedPorts(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		svc    string
		target uint32
		want   string
	}{
		{svcTemporal, 7233, "7233"}, // the CLI's default --address is localhost:7233
		{svcUI, 8080, "8233"},       // the dev server's UI port, so links printed by the CLI carry over
		{svcMinio, 9000, "9000"},
	} {
		if got := published(service(t, p, c.svc), c.target); got != c.want {
			t.Errorf("%s: container port %d published on %q, want %q", c.svc, c.target, got, c.want)
		}
	}
	if got, want := env(service(t, p, svcUI), "TEMPORAL_ADDRESS"), svcTemporal+":7233"; got != want {
		t.Errorf("%s: TEMPORAL_ADDRESS = %q, want %q", svcUI, got, want)
	}
}

func TestWorkersReachTemporalAndStore(t *testing.T) {
	p := load(t)
	minio := service(t, p, svcMinio)
	bucketCmd := strings.Join(service(t, p, svcBucket).Command, " ")
	for _, name := range []string{svcControl, svcGPU} {
		s := service(t, p, name)
		host, port, err := net.SplitHostPort(env(s, "TEMPORAL_ADDRESS"))
		if err != nil || host != svcTemporal || port != "7233" {
			t.Errorf("%s: TEMPORAL_ADDRESS = %q, want %s:7233", name, env(s, "TEMPORAL_ADDRESS"), svcTemporal)
		}
		store, err := url.Parse(env(s, "RLSWEEP_STORE"))
		if err != nil || store.Scheme != "s3" || store.Host == "" {
			t.Errorf("%s: RLSWEEP_STORE = %q, want s3://bucket/prefix", name, env(s, "RLSWEEP_STORE"))
		} else if !strings.Contains(bucketCmd, "mc mb --ignore-existing local/"+store.Host) {
			t.Errorf("%s: bucket %q of RLSWEEP_STORE is not created by %s: %q", name, store.Host, svcBucket, bucketCmd)
		}
		endpoint, err := url.Parse(env(s, "AWS_ENDPOINT_URL_S3"))
		if err != nil || endpoint.Hostname() != svcMinio || endpoint.Port() != "9000" {
			t.Errorf("%s: AWS_ENDPOINT_URL_S3 = %q, want http://%s:9000", name, env(s, "AWS_ENDPOINT_URL_S3"), svcMinio)
		}
		if got := env(s, "RLSWEEP_S3_PATH_STYLE"); got != "1" {
			t.Errorf("%s: RLSWEEP_S3_PATH_STYLE = %q, want 1 (MinIO serves path-style URLs)", name, got)
		}
		if env(s, "AWS_REGION") == "" {
			t.Errorf("%s: AWS_REGION is empty, want a region for the SDK's signer", name)
		}
		for key, minioKey := range map[string]string{"AWS_ACCESS_KEY_ID": "MINIO_ROOT_USER", "AWS_SECRET_ACCESS_KEY": "MINIO_ROOT_PASSWORD"} {
			if got, want := env(s, key), env(minio, minioKey); got == "" || got != want {
				t.Errorf("%s: %s = %q, want %s's %s %q", name, key, got, svcMinio, minioKey, want)
			}
		}
		for _, dep := range []string{svcTemporal, svcAttrs, svcBucket} {
			if !dependsOn(p, name, dep) {
				t.Errorf("%s: does not start after %s", name, dep)
			}
		}
	}
}

// dependsOn reports whether svc depends on dep, directly or through other services.
func dependsOn(p *types.Project, svc, dep string) bool {
	s, err := p.GetService(svc)
	if err != nil {
		return false
	}
	for d := range s.DependsOn {
		if d == dep || dependsOn(p, d, dep) {
			return true
		}
	}
	return false
}

// workerFlags parses a `rlsweep worker` command line with the worker's flags; an unknown flag is an error.
type workerFlags struct {
	control bool
	queues  []string
	gpus    string
}

func parseWorker(t *testing.T, s types.ServiceConfig) workerFlags {
	t.Helper()
	args := []string(s.Command)
	if len(args) == 0 || args[0] != "worker" {
		t.Fatalf("%s: command %q, want rlsweep worker ...", s.Name, args)
	}
	var w workerFlags
	fs := pflag.NewFlagSet(s.Name, pflag.ContinueOnError)
	fs.BoolVar(&w.control, "control", true, "")
	fs.StringSliceVar(&w.queues, "queue", []string{workflows.DefaultTrialQueue}, "")
	fs.StringVar(&w.gpus, "gpus", "", "")
	fs.Int("slots", 1, "")
	fs.Int("trials-per-gpu", 1, "")
	fs.String("work-dir", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("%s: command %q: %v", s.Name, args, err)
	}
	return w
}

func TestWorkerQueues(t *testing.T) {
	p := load(t)
	control := parseWorker(t, service(t, p, svcControl))
	if !control.control || len(control.queues) != 0 {
		t.Errorf("%s: control=%v queues=%q, want only the control queue %q", svcControl, control.control, control.queues, workflows.ControlQueue)
	}
	gpu := parseWorker(t, service(t, p, svcGPU))
	if gpu.control || !slices.Equal(gpu.queues, []string{workflows.DefaultTrialQueue}) {
		t.Errorf("%s: control=%v queues=%q, want only the trial queue %q", svcGPU, gpu.control, gpu.queues, workflows.DefaultTrialQueue)
	}
	if gpu.gpus == "" {
		t.Errorf("%s: no --gpus, want one activity slot per GPU", svcGPU)
	}
}

func TestGPUReservation(t *testing.T) {
	s := service(t, load(t), svcGPU)
	if s.Deploy == nil || s.Deploy.Resources.Reservations == nil {
		t.Fatalf("%s: no deploy.resources.reservations, want NVIDIA GPUs reserved", svcGPU)
	}
	for _, d := range s.Deploy.Resources.Reservations.Devices {
		if d.Driver == "nvidia" && slices.Contains(d.Capabilities, "gpu") && (d.Count != 0 || len(d.IDs) > 0) {
			return
		}
	}
	t.Errorf("%s: devices %+v, want driver nvidia with capability gpu and a count or device_ids",
		svcGPU, s.Deploy.Resources.Reservations.Devices)
}

var attrFlag = regexp.MustCompile(`--name\s+(\S+)\s+--type\s+(\S+)`)

func TestSearchAttributesRegistered(t *testing.T) {
	s := service(t, load(t), svcAttrs)
	cmd := strings.Join(s.Command, " ")
	if !strings.Contains(cmd, "temporal operator search-attribute create") {
		t.Fatalf("%s: command %q, want temporal operator search-attribute create", svcAttrs, cmd)
	}
	got := map[string]string{}
	for _, m := range attrFlag.FindAllStringSubmatch(cmd, -1) {
		got[m[1]] = m[2]
	}
	want := map[string]string{}
	for k := range workflows.SearchAttributes().GetUntypedValues() {
		want[k.GetName()] = k.GetValueType().String()
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("%s: search attribute %s registered as %q, want %q", svcAttrs, name, got[name], typ)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			// Harmless: registered ahead of the code that sets it, or kept for old histories.
			t.Logf("%s: registers %s, which workflows.SearchAttributes does not list", svcAttrs, name)
		}
	}
	if got, want := env(s, "TEMPORAL_ADDRESS"), svcTemporal+":7233"; got != want {
		t.Errorf("%s: TEMPORAL_ADDRESS = %q, want %q", svcAttrs, got, want)
	}
}

func TestFilesReferenced(t *testing.T) {
	p := load(t)
	temporal := service(t, p, svcTemporal)
	if got := env(temporal, "DB"); got != "postgres12" {
		t.Errorf("%s: DB = %q, want postgres12", svcTemporal, got)
	}
	// The server's own files: the config file its entrypoint names and the dynamic config that file
	// reads, each mounted from the repository.
	for what, path := range map[string]string{
		"DYNAMIC_CONFIG_FILE_PATH": env(temporal, "DYNAMIC_CONFIG_FILE_PATH"),
		"--config-file":            flagValue(temporal.Entrypoint, "--config-file"),
	} {
		src := mountedFrom(temporal.Volumes, path)
		if src == "" {
			t.Errorf("%s: %s names %q, which no volume mounts", svcTemporal, what, path)
			continue
		}
		if _, err := os.Stat(src); err != nil {
			t.Errorf("%s: %s: %v", svcTemporal, what, err)
		}
	}
	for _, name := range []string{svcControl, svcGPU} {
		b := service(t, p, name).Build
		if b == nil {
			t.Errorf("%s: no build section, want infra/Dockerfile", name)
			continue
		}
		if _, err := os.Stat(filepath.Join(b.Context, b.Dockerfile)); err != nil {
			t.Errorf("%s: Dockerfile: %v", name, err)
		}
	}
}

// flagValue returns the value after flag in argv, or "".
func flagValue(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// mountedFrom returns the host path a container path comes from through one of the volumes (a file
// mounted itself, or inside a mounted directory), or "" when none mounts it.
func mountedFrom(vols []types.ServiceVolumeConfig, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join("/etc/temporal", path) // the server image's working directory
	}
	for _, v := range vols {
		if path == v.Target {
			return v.Source
		}
		if rest, ok := strings.CutPrefix(path, v.Target+"/"); ok {
			return filepath.Join(v.Source, rest)
		}
	}
	return ""
}
