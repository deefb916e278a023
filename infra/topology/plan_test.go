package topology

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/rlsweep/rlsweep/workflows"
)

var root = filepath.Join("..", "..")

// service is one service of `scripts/topology.sh plan`: its command line and its environment.
type service struct {
	argv []string
	env  map[string]string
}

// plan runs `scripts/topology.sh plan` with only the given settings in its environment (so every other
// setting takes its default) and parses what it prints.
func plan(t *testing.T, settings ...string) (names []string, svcs map[string]service) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "scripts", "topology.sh"), "plan")
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=/home/someone"}, credentials...), settings...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/topology.sh plan: %v\n%s", err, stderr.String())
	}
	names, svcs = parsePlan(out)
	if names == nil {
		t.Fatalf("scripts/topology.sh plan: no services in\n%s", out)
	}
	return names, svcs
}

// parsePlan reads what `scripts/topology.sh plan` prints: "service NAME", then "exec ARGV" and "env K=V"
// lines. Any other line makes it return nil.
func parsePlan(out []byte) (names []string, svcs map[string]service) {
	svcs = map[string]service{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "service":
			cur = rest
			names = append(names, cur)
			svcs[cur] = service{env: map[string]string{}}
		case "exec":
			s := svcs[cur]
			s.argv = strings.Fields(rest)
			svcs[cur] = s
		case "env":
			k, v, _ := strings.Cut(rest, "=")
			svcs[cur].env[k] = v
		default:
			return nil, nil
		}
	}
	return names, svcs
}

// credentials are the variables docker-compose.yml requires (it ships no default credentials), with
// values for the tests; plan gives scripts/topology.sh the same.
var credentials = []string{"MINIO_ROOT_USER=test-minio-user", "MINIO_ROOT_PASSWORD=test-minio-password",
	"POSTGRES_PASSWORD=test-postgres-password"}

// loadCompose reads docker-compose.yml with every ${VAR:-default} at its default.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithEnv(credentials))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

func composeEnv(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

func TestTopologyHasEveryComposeService(t *testing.T) {
	p := loadCompose(t)
	names, _ := plan(t)
	for _, name := range p.ServiceNames() {
		if !slices.Contains(names, name) {
			t.Errorf("docker-compose.yml service %s: scripts/topology.sh plan has no service of that name (it has %q)", name, names)
		}
	}
	for _, name := range names {
		if name == "postgresql" || strings.HasPrefix(name, "rlsweep-gpu") {
			continue
		}
		if _, err := p.GetService(name); err != nil {
			t.Errorf("scripts/topology.sh plan: service %s is not in docker-compose.yml", name)
		}
	}
	// The start order is compose's depends_on order.
	for _, name := range names {
		s, err := p.GetService(name)
		if err != nil {
			continue
		}
		for dep := range s.DependsOn {
			if slices.Index(names, dep) > slices.Index(names, name) {
				t.Errorf("scripts/topology.sh plan: %s starts before %s, which it depends on in docker-compose.yml", name, dep)
			}
		}
	}
}

var envRef = regexp.MustCompile(`env "([A-Z0-9_]+)"`)

// TestTemporalServerSettings: the server runs as in the compose stack: the same command and config file,
// every setting compose gives it under the same name, and infra/temporal/config.yaml reads each of them.
func TestTemporalServerSettings(t *testing.T) {
	temporal, err := loadCompose(t).GetService("temporal")
	if err != nil {
		t.Fatal(err)
	}
	_, svcs := plan(t)
	got := svcs["temporal"]
	if len(got.argv) == 0 || filepath.Base(got.argv[0]) != "temporal-server" {
		t.Fatalf("temporal: command %q, want the temporal-server binary", got.argv)
	}
	cfgIdx := slices.Index(got.argv, "--config-file")
	if cfgIdx < 0 || cfgIdx+1 >= len(got.argv) {
		t.Fatalf("temporal: command %q, want --config-file", got.argv)
	}
	cfg, err := os.ReadFile(got.argv[cfgIdx+1])
	if err != nil {
		t.Fatalf("temporal: config file: %v", err)
	}
	// compose runs the same binary with the same flags and the same file, mounted into the container.
	ep := append(slices.Clone([]string(temporal.Entrypoint)), temporal.Command...)
	if len(ep) != len(got.argv) || filepath.Base(ep[0]) != filepath.Base(got.argv[0]) {
		t.Errorf("temporal: docker-compose.yml runs %q, scripts/topology.sh %q", ep, got.argv)
	} else {
		for i := 1; i < len(ep); i++ {
			if i == cfgIdx+1 {
				if !sameFile(mountedFrom(temporal.Volumes, ep[i]), got.argv[i]) {
					t.Errorf("temporal: docker-compose.yml's --config-file %s is not %s", ep[i], got.argv[i])
				}
			} else if ep[i] != got.argv[i] {
				t.Errorf("temporal: argument %d: docker-compose.yml %q, scripts/topology.sh %q", i, ep[i], got.argv[i])
			}
		}
	}
	reads := map[string]bool{}
	for _, m := range envRef.FindAllStringSubmatch(string(cfg), -1) {
		reads[m[1]] = true
	}
	for k := range got.env {
		if !reads[k] {
			t.Errorf("temporal: the script sets %s, which %s does not read", k, got.argv[cfgIdx+1])
		}
	}
	want := composeEnv(temporal)
	for k, v := range want {
		g, ok := got.env[k]
		switch {
		case !ok:
			t.Errorf("temporal: docker-compose.yml sets %s=%q, scripts/topology.sh does not", k, v)
		case k == "DYNAMIC_CONFIG_FILE_PATH":
			// compose mounts the file at a path inside the container; both must be the same file.
			if src := mountedFrom(temporal.Volumes, v); !sameFile(src, g) {
				t.Errorf("temporal: dynamic config %s, docker-compose.yml mounts %q there", g, src)
			}
		case k == "POSTGRES_SEEDS" || k == "DB_PORT" || k == "BIND_ON_IP" || k == "TEMPORAL_BROADCAST_ADDRESS" || k == "PROMETHEUS_ENDPOINT":
			// addresses differ: a compose service name, the container's addresses there, this machine here
		case g != v:
			t.Errorf("temporal: %s = %q, docker-compose.yml has %q", k, g, v)
		}
	}
	if !reads["NUM_HISTORY_SHARDS"] || got.env["NUM_HISTORY_SHARDS"] != "4" {
		t.Errorf("temporal: NUM_HISTORY_SHARDS = %q, want 4 as in docker-compose.yml", got.env["NUM_HISTORY_SHARDS"])
	}
	pg, err := loadCompose(t).GetService("postgresql")
	if err != nil {
		t.Fatal(err)
	}
	if u := composeEnv(pg)["POSTGRES_USER"]; got.env["POSTGRES_USER"] != u {
		t.Errorf("temporal: POSTGRES_USER = %q, compose's postgresql creates %q", got.env["POSTGRES_USER"], u)
	}
}

type workerFlags struct {
	control bool
	queues  []string
	gpus    string
	slots   int
}

func parseWorker(t *testing.T, name string, argv []string) workerFlags {
	t.Helper()
	if len(argv) == 0 || argv[0] != "worker" {
		t.Fatalf("%s: command %q, want rlsweep worker ...", name, argv)
	}
	var w workerFlags
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.BoolVar(&w.control, "control", true, "")
	fs.StringSliceVar(&w.queues, "queue", []string{workflows.DefaultTrialQueue}, "")
	fs.StringVar(&w.gpus, "gpus", "", "")
	fs.IntVar(&w.slots, "slots", 1, "")
	fs.Int("trials-per-gpu", 1, "")
	fs.String("work-dir", "", "")
	if err := fs.Parse(argv[1:]); err != nil {
		t.Fatalf("%s: command %q: %v", name, argv, err)
	}
	return w
}

// k8sArgs returns the args of the one container of Deployment name in infra/k8s, and the data of the
// ConfigMap and Secret its pods read.
func k8sDeployment(t *testing.T, name string) (args []string, env map[string]string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "infra", "k8s", "*.yaml"))
	env = map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var o struct {
				Kind     string
				Metadata struct{ Name string }
				Spec     struct {
					Template struct {
						Spec struct {
							Containers []struct{ Args []string }
						}
					}
				}
				Data       map[string]string
				StringData map[string]string `yaml:"stringData"`
			}
			if dec.Decode(&o) != nil {
				break
			}
			switch {
			case o.Kind == "Deployment" && o.Metadata.Name == name && len(o.Spec.Template.Spec.Containers) == 1:
				args = o.Spec.Template.Spec.Containers[0].Args
			case o.Kind == "ConfigMap" && o.Metadata.Name == "rlsweep":
				for k, v := range o.Data {
					env[k] = v
				}
			case o.Kind == "Secret" && o.Metadata.Name == "rlsweep-s3":
				for k, v := range o.StringData {
					env[k] = v
				}
			}
		}
	}
	if args == nil {
		t.Fatalf("infra/k8s: no Deployment %s with one container", name)
	}
	return args, env
}

// TestWorkersMatchComposeAndKubernetes: each worker runs the same rlsweep worker command (task queues,
// control or not) with the same environment variables as its compose service and its Kubernetes
// Deployment, the addresses pointing at this machine's services.
func TestWorkersMatchComposeAndKubernetes(t *testing.T) {
	p := loadCompose(t)
	_, svcs := plan(t, "TOPOLOGY_TEMPORAL_PORT=17233", "TOPOLOGY_MINIO_PORT=19000")
	minio := composeEnv(mustService(t, p, "minio"))
	for _, name := range []string{"rlsweep-control", "rlsweep-gpu"} {
		got, ok := svcs[name]
		if !ok {
			t.Fatalf("scripts/topology.sh plan: no service %s", name)
		}
		if len(got.argv) == 0 || filepath.Base(got.argv[0]) != "rlsweep" {
			t.Fatalf("%s: command %q, want the rlsweep binary", name, got.argv)
		}
		mine := parseWorker(t, name+" (topology.sh)", got.argv[1:])
		cs := mustService(t, p, name)
		theirs := parseWorker(t, name+" (docker-compose.yml)", cs.Command)
		kargs, kenv := k8sDeployment(t, name)
		kube := parseWorker(t, name+" (infra/k8s)", kargs)
		for what, w := range map[string]workerFlags{"docker-compose.yml": theirs, "infra/k8s": kube} {
			if mine.control != w.control || !slices.Equal(mine.queues, w.queues) {
				t.Errorf("%s: control=%v queues=%q, %s has control=%v queues=%q", name, mine.control, mine.queues, what, w.control, w.queues)
			}
		}
		if !mine.control && mine.gpus == "" && mine.slots < 1 {
			t.Errorf("%s: neither --gpus nor --slots", name)
		}
		want := composeEnv(cs)
		for k, v := range want {
			g, ok := got.env[k]
			if !ok {
				t.Errorf("%s: docker-compose.yml sets %s, scripts/topology.sh does not", name, k)
				continue
			}
			switch k {
			case "TEMPORAL_ADDRESS":
				if _, port, err := net.SplitHostPort(g); err != nil || port != "17233" {
					t.Errorf("%s: TEMPORAL_ADDRESS = %q, want the frontend's port 17233", name, g)
				}
			case "AWS_ENDPOINT_URL_S3":
				if u, err := url.Parse(g); err != nil || u.Port() != "19000" {
					t.Errorf("%s: AWS_ENDPOINT_URL_S3 = %q, want MinIO's port 19000", name, g)
				}
			default:
				if g != v {
					t.Errorf("%s: %s = %q, docker-compose.yml has %q", name, k, g, v)
				}
			}
		}
		for k := range got.env {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: scripts/topology.sh sets %s, docker-compose.yml does not", name, k)
			}
		}
		for k := range kenv {
			if _, ok := got.env[k]; !ok {
				t.Errorf("%s: infra/k8s gives the worker %s, scripts/topology.sh does not", name, k)
			}
		}
		for _, k := range []string{"TEMPORAL_NAMESPACE", "RLSWEEP_STORE", "AWS_REGION"} {
			if kenv[k] != got.env[k] {
				t.Errorf("%s: %s = %q, infra/k8s has %q", name, k, got.env[k], kenv[k])
			}
		}
		if got.env["AWS_ACCESS_KEY_ID"] != minio["MINIO_ROOT_USER"] || got.env["AWS_SECRET_ACCESS_KEY"] != minio["MINIO_ROOT_PASSWORD"] {
			t.Errorf("%s: S3 credentials are not MinIO's root credentials", name)
		}
	}
}

func mustService(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return s
}

// TestMinioAndSetup: MinIO runs with compose's credentials; the setup step registers the namespace the
// workers use and creates the bucket of their RLSWEEP_STORE, as compose's one-shot services do.
func TestMinioAndSetup(t *testing.T) {
	p := loadCompose(t)
	_, svcs := plan(t)
	m := svcs["minio"]
	if len(m.argv) < 2 || filepath.Base(m.argv[0]) != "minio" || m.argv[1] != "server" {
		t.Errorf("minio: command %q, want minio server ...", m.argv)
	}
	cm := composeEnv(mustService(t, p, "minio"))
	for _, k := range []string{"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"} {
		if m.env[k] != cm[k] {
			t.Errorf("minio: %s = %q, docker-compose.yml has %q", k, m.env[k], cm[k])
		}
	}
	workers := svcs["rlsweep-control"].env
	bucketCmd := strings.Join(mustService(t, p, "minio-bucket").Command, " ")
	for _, name := range []string{"temporal-search-attributes", "minio-bucket"} {
		s := svcs[name]
		if len(s.argv) == 0 || filepath.Base(s.argv[0]) != "topology-setup" {
			t.Errorf("%s: command %q, want topology-setup (infra/topology/setup)", name, s.argv)
			continue
		}
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		address := fs.String("address", "", "")
		ns := fs.String("namespace", "", "")
		store := fs.String("store", "", "")
		if err := fs.Parse(s.argv[1:]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *address != workers["TEMPORAL_ADDRESS"] || *ns != workers["TEMPORAL_NAMESPACE"] || *store != workers["RLSWEEP_STORE"] {
			t.Errorf("%s: --address %s --namespace %s --store %s, the workers use %s, %s, %s", name, *address, *ns, *store,
				workers["TEMPORAL_ADDRESS"], workers["TEMPORAL_NAMESPACE"], workers["RLSWEEP_STORE"])
		}
		u, _ := url.Parse(*store)
		if !strings.Contains(bucketCmd, "local/"+u.Host) {
			t.Errorf("%s: creates bucket %s, docker-compose.yml's minio-bucket runs %q", name, u.Host, bucketCmd)
		}
	}
}

// mountedFrom returns the host path a container path comes from through one of the volumes (a file
// mounted itself, or inside a mounted directory), or "" when none mounts it.
func mountedFrom(vols []types.ServiceVolumeConfig, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join("/etc/temporal", path) // the server images' working directory
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

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// TestSchemaAndUI: the schema set-up and the Web UI get compose's settings (addresses aside).
func TestSchemaAndUI(t *testing.T) {
	p := loadCompose(t)
	_, svcs := plan(t)
	schema := svcs["temporal-schema"]
	if len(schema.argv) == 0 || filepath.Base(schema.argv[0]) != "temporal-sql-tool" {
		t.Errorf("temporal-schema: command %q, want temporal-sql-tool", schema.argv)
	}
	for k, v := range composeEnv(mustService(t, p, "temporal-schema")) {
		switch g, ok := schema.env[k]; {
		case !ok:
			t.Errorf("temporal-schema: docker-compose.yml sets %s=%q, scripts/topology.sh does not", k, v)
		case k == "SQL_HOST" || k == "SQL_PORT":
		case g != v:
			t.Errorf("temporal-schema: %s = %q, docker-compose.yml has %q", k, g, v)
		}
	}
	if got, want := schema.env["SQL_PORT"], svcs["temporal"].env["DB_PORT"]; got != want {
		t.Errorf("temporal-schema: SQL_PORT = %q, the server's DB_PORT %q", got, want)
	}
	ui := svcs["temporal-ui"]
	if len(ui.argv) == 0 || filepath.Base(ui.argv[0]) != "temporal-ui" {
		t.Errorf("temporal-ui: command %q, want the temporal-ui binary", ui.argv)
	}
	cui := mustService(t, p, "temporal-ui")
	published := ""
	for _, port := range cui.Ports {
		published = port.Published
	}
	for k, v := range composeEnv(cui) {
		switch g, ok := ui.env[k]; {
		case !ok:
			t.Errorf("temporal-ui: docker-compose.yml sets %s=%q, scripts/topology.sh does not", k, v)
		case k == "TEMPORAL_ADDRESS":
			if want := "127.0.0.1:7233"; g != want {
				t.Errorf("temporal-ui: TEMPORAL_ADDRESS = %q, want the frontend %s", g, want)
			}
		case k == "TEMPORAL_UI_PORT":
			// compose publishes the container's port elsewhere; the script listens there itself
			if g != published {
				t.Errorf("temporal-ui: TEMPORAL_UI_PORT = %q, docker-compose.yml publishes the UI on %s", g, published)
			}
		case g != v:
			t.Errorf("temporal-ui: %s = %q, docker-compose.yml has %q", k, g, v)
		}
	}
	if u := svcs["rlsweep-control"].env["RLSWEEP_UI_URL"]; u != "http://localhost:"+ui.env["TEMPORAL_UI_PORT"] {
		t.Errorf("rlsweep-control: RLSWEEP_UI_URL = %q, the UI listens on port %s", u, ui.env["TEMPORAL_UI_PORT"])
	}
}

// pinned reads a NAME=VALUE pin from scripts/install-tools.sh.
func pinned(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scripts", "install-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("scripts/install-tools.sh: no %s=", name)
	}
	return string(m[1])
}

// knownDifferences are the compose services whose image is not the build scripts/topology.sh runs,
// each with the image docker-compose.yml pins (a change there must come here, and to docs/deploy.md)
// and why.
var knownDifferences = map[string]struct{ image, why string }{
	"postgresql":   {"postgres:16", "the script runs Debian's PostgreSQL (15 on Debian 12)"},
	"minio":        {"minio/minio:RELEASE.2025-04-22T22-12-26Z", "the script runs MinIO built from source at MINIO_VERSION, the build the integration tests use"},
	"minio-bucket": {"minio/mc:RELEASE.2025-04-16T18-13-26Z", "the script creates the bucket with infra/topology/setup"},
}

// TestVersionsInStep: docker-compose.yml and the Kubernetes notes pin the Temporal server, its admin
// tools and the Web UI at the versions scripts/install-tools.sh builds for scripts/topology.sh; every
// other compose image is a known difference, named with its reason.
func TestVersionsInStep(t *testing.T) {
	server := strings.TrimPrefix(pinned(t, "TEMPORAL_SERVER_VERSION"), "v")
	ui := strings.TrimPrefix(pinned(t, "TEMPORAL_UI_VERSION"), "v")
	inStep := map[string]string{
		"temporal":                   "temporalio/server:" + server,
		"temporal-schema":            "temporalio/admin-tools:" + server,
		"temporal-search-attributes": "temporalio/admin-tools:" + server,
		"temporal-ui":                "temporalio/ui:" + ui,
		"rlsweep-control":            "rlsweep:dev", // built from this repository (infra/Dockerfile)
		"rlsweep-gpu":                "rlsweep:dev",
	}
	p := loadCompose(t)
	for _, name := range p.ServiceNames() {
		img := mustService(t, p, name).Image
		if want, ok := inStep[name]; ok {
			if img != want {
				t.Errorf("docker-compose.yml %s: image %s, want %s (scripts/install-tools.sh pins what scripts/topology.sh runs)", name, img, want)
			}
			continue
		}
		d, ok := knownDifferences[name]
		switch {
		case !ok:
			t.Errorf("docker-compose.yml %s: image %s is neither pinned in step with scripts/install-tools.sh nor a known difference", name, img)
		case img != d.image:
			t.Errorf("docker-compose.yml %s: image %s, the known difference names %s (%s): update both, and docs/deploy.md", name, img, d.image, d.why)
		default:
			t.Logf("known difference: %s: compose runs %s; %s", name, img, d.why)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "infra", "k8s", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server.image.tag=" + server, "admintools.image.tag=" + server, "web.image.tag=" + ui} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("infra/k8s/README.md: the Helm install does not pin %s", want)
		}
	}
}
