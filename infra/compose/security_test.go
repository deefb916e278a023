package compose

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every published port listens on 127.0.0.1 unless RLSWEEP_BIND names another address.
func TestPortsBoundToLoopback(t *testing.T) {
	for _, c := range []struct{ bind, want string }{{"", "127.0.0.1"}, {"10.1.2.3", "10.1.2.3"}} {
		environ := credentials
		if c.bind != "" {
			environ = append(slices.Clone(credentials), "RLSWEEP_BIND="+c.bind)
		}
		p, err := loadWith(environ)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range p.Services {
			for _, port := range s.Ports {
				n++
				if port.HostIP != c.want {
					t.Errorf("RLSWEEP_BIND=%q: %s publishes container port %d on host address %q, want %q",
						c.bind, s.Name, port.Target, port.HostIP, c.want)
				}
			}
		}
		if n == 0 {
			t.Fatal("docker-compose.yml publishes no port")
		}
	}
}

// docker-compose.yml ships no credentials: each one must be set, and `docker compose` refuses to start
// without it, naming it.
func TestNoDefaultCredentials(t *testing.T) {
	for i, kv := range credentials {
		name, _, _ := strings.Cut(kv, "=")
		without := append(slices.Clone(credentials[:i]), credentials[i+1:]...)
		_, err := loadWith(without)
		if err == nil || !strings.Contains(err.Error(), "set "+name) {
			t.Errorf("docker-compose.yml without %s: %v, want a refusal saying to set it", name, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// A ${VAR:-default} or ${VAR-default} on a credential would ship its default.
	re := regexp.MustCompile(`\$\{[A-Z_]*(PASSWORD|SECRET|_USER|ACCESS_KEY|API_KEY|_PWD)[A-Z_]*:?-`)
	if m := re.FindAllString(string(b), -1); len(m) > 0 {
		t.Errorf("docker-compose.yml gives credentials defaults: %q", m)
	}
	for _, lit := range []string{"rlsweep-secret", "minioadmin"} {
		if strings.Contains(string(b), lit) {
			t.Errorf("docker-compose.yml holds the literal credential %q", lit)
		}
	}
	// The same credentials reach the workers.
	p := load(t)
	for _, svc := range []string{svcControl, svcGPU} {
		s := service(t, p, svc)
		if env(s, "AWS_SECRET_ACCESS_KEY") != "test-minio-password" || env(s, "AWS_ACCESS_KEY_ID") != "test-minio-user" {
			t.Errorf("%s: S3 credentials are not the MinIO root credentials of the environment", svc)
		}
	}
}

// The server's HTTP API is off: the Temporal config template enables it only when FRONTEND_HTTP_PORT
// is set, and neither compose nor the topology script sets one.
func TestHTTPAPIOff(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "infra", "temporal", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `default "0" (env "FRONTEND_HTTP_PORT")`) {
		t.Errorf("infra/temporal/config.yaml: the frontend's httpPort does not default to 0 (off)")
	}
	p := load(t)
	if v := env(service(t, p, svcTemporal), "FRONTEND_HTTP_PORT"); v != "" && v != "0" {
		t.Errorf("%s: FRONTEND_HTTP_PORT = %q, want the HTTP API off", svcTemporal, v)
	}
	topo, err := os.ReadFile(filepath.Join(root, "scripts", "topology.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`FRONTEND_HTTP_PORT=(\S+)`).FindStringSubmatch(string(topo)); m == nil || m[1] != "0" {
		t.Errorf("scripts/topology.sh: FRONTEND_HTTP_PORT is %q, want 0 (the HTTP API off)", m)
	}
}

// docs/security.md and docs/deploy.md say what docker-compose.yml does: where its ports listen, which
// credentials it requires, that the HTTP API is off, and how to turn on TLS for the frontend.
func TestSecurityDocumented(t *testing.T) {
	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"security.md", "deploy.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"RLSWEEP_BIND", "127.0.0.1", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD",
			"POSTGRES_PASSWORD", "FRONTEND_HTTP_PORT", "--allow-trainer", "TEMPORAL_TLS_CLIENT_CERT_PATH"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("docs/%s does not mention %s", doc, want)
			}
		}
	}
	// The client certificate variables the compose file's comments show are the ones docs/security.md
	// documents.
	sec, _ := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	for _, v := range regexp.MustCompile(`TEMPORAL_TLS_[A-Z_]+`).FindAllString(string(compose), -1) {
		if !strings.Contains(string(sec), v) {
			t.Errorf("docker-compose.yml names %s, docs/security.md does not", v)
		}
	}
	if !strings.Contains(string(sec), "requireClientAuth: true") {
		t.Errorf("docs/security.md lacks the frontend's mTLS config (global.tls ... requireClientAuth: true)")
	}
}
