package k8s

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/rlsweep/rlsweep/workflows"
)

// object is the part of a manifest the checks read.
type object struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Args      []string `yaml:"args"`
					Resources struct {
						Limits map[string]string `yaml:"limits"`
					} `yaml:"resources"`
					EnvFrom []struct {
						ConfigMapRef *struct{ Name string } `yaml:"configMapRef"`
						SecretRef    *struct{ Name string } `yaml:"secretRef"`
					} `yaml:"envFrom"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

// load parses every YAML document in this directory, keyed by kind/name.
func load(t *testing.T) map[string]object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	objs := map[string]object{}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(r)
		for {
			var o object
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: a document without kind or metadata.name", f)
			}
			objs[o.Kind+"/"+o.Metadata.Name] = o
		}
		r.Close()
	}
	return objs
}

type workerFlags struct {
	control bool
	queues  []string
	gpus    string
}

func parseWorker(t *testing.T, name string, args []string) workerFlags {
	t.Helper()
	if len(args) == 0 || args[0] != "worker" {
		t.Fatalf("%s: args %q, want rlsweep worker ...", name, args)
	}
	var w workerFlags
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.BoolVar(&w.control, "control", true, "")
	fs.StringSliceVar(&w.queues, "queue", []string{workflows.DefaultTrialQueue}, "")
	fs.StringVar(&w.gpus, "gpus", "", "")
	fs.Int("slots", 1, "")
	fs.Int("trials-per-gpu", 1, "")
	fs.String("work-dir", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("%s: args %q: %v", name, args, err)
	}
	return w
}

func deployment(t *testing.T, objs map[string]object, name string) object {
	t.Helper()
	o, ok := objs["Deployment/"+name]
	if !ok || len(o.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("Deployment %s: missing or not one container", name)
	}
	return o
}

func TestGPUWorkerOneSlotPerGPU(t *testing.T) {
	c := deployment(t, load(t), "rlsweep-gpu").Spec.Template.Spec.Containers[0]
	w := parseWorker(t, "rlsweep-gpu", c.Args)
	if w.control || !slices.Equal(w.queues, []string{workflows.DefaultTrialQueue}) {
		t.Errorf("rlsweep-gpu: control=%v queues=%q, want only %q", w.control, w.queues, workflows.DefaultTrialQueue)
	}
	limit, err := strconv.Atoi(c.Resources.Limits["nvidia.com/gpu"])
	if err != nil || limit < 1 {
		t.Fatalf("rlsweep-gpu: nvidia.com/gpu limit %q, want a positive count", c.Resources.Limits["nvidia.com/gpu"])
	}
	var want []string
	for i := range limit {
		want = append(want, strconv.Itoa(i))
	}
	if got := strings.Split(w.gpus, ","); !slices.Equal(got, want) {
		t.Errorf("rlsweep-gpu: --gpus %q, want %q to match nvidia.com/gpu: %d", w.gpus, strings.Join(want, ","), limit)
	}
}

func TestControlWorker(t *testing.T) {
	c := deployment(t, load(t), "rlsweep-control").Spec.Template.Spec.Containers[0]
	w := parseWorker(t, "rlsweep-control", c.Args)
	if !w.control || len(w.queues) != 0 {
		t.Errorf("rlsweep-control: control=%v queues=%q, want only %q", w.control, w.queues, workflows.ControlQueue)
	}
}

func TestWorkersConfigured(t *testing.T) {
	objs := load(t)
	for _, name := range []string{"rlsweep-gpu", "rlsweep-control"} {
		for _, ref := range deployment(t, objs, name).Spec.Template.Spec.Containers[0].EnvFrom {
			var key string
			switch {
			case ref.ConfigMapRef != nil:
				key = "ConfigMap/" + ref.ConfigMapRef.Name
			case ref.SecretRef != nil:
				key = "Secret/" + ref.SecretRef.Name
			}
			if _, ok := objs[key]; !ok {
				t.Errorf("%s: envFrom %s, which no manifest here defines", name, key)
			}
		}
	}
	cm := objs["ConfigMap/rlsweep"]
	for _, k := range []string{"TEMPORAL_ADDRESS", "RLSWEEP_STORE"} {
		if cm.Data[k] == "" {
			t.Errorf("ConfigMap rlsweep: %s is empty", k)
		}
	}
	if !strings.HasPrefix(cm.Data["RLSWEEP_STORE"], "s3://") {
		t.Errorf("ConfigMap rlsweep: RLSWEEP_STORE = %q, want s3://bucket/prefix", cm.Data["RLSWEEP_STORE"])
	}
	for k, v := range objs["Secret/rlsweep-s3"].StringData {
		if v != "REPLACE_ME" {
			t.Errorf("Secret rlsweep-s3: %s holds a value, want the placeholder REPLACE_ME in the template", k)
		}
	}
}

// The manifests expose nothing and ship no credential: no Service, host port or host network; the S3
// Secret holds placeholders; a NetworkPolicy refuses all ingress to the workers and one lets only
// rlsweep's workers (and Temporal's own pods) reach the frontend's gRPC port. docs/security.md and
// docs/deploy.md say so.
func TestClosedByDefault(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	var policies []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"hostPort:", "hostNetwork: true", "NodePort", "LoadBalancer", "kind: Service\n"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s: %q: the workers serve nothing, and nothing here should be reachable from outside", f, bad)
			}
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		for {
			var o map[string]any
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o["kind"] == "NetworkPolicy" {
				policies = append(policies, o)
			}
		}
	}
	for _, o := range load(t) {
		if o.Kind != "Secret" {
			continue
		}
		for k, v := range o.StringData {
			if v != "REPLACE_ME" {
				t.Errorf("Secret %s: %s = %q, want the placeholder REPLACE_ME (no credential in the repository)", o.Metadata.Name, k, v)
			}
		}
	}
	get := func(m any, path ...string) any {
		for _, p := range path {
			mm, ok := m.(map[string]any)
			if !ok {
				return nil
			}
			m = mm[p]
		}
		return m
	}
	var workersClosed, frontendLimited bool
	for _, p := range policies {
		sel := get(p, "spec", "podSelector", "matchLabels")
		ingress, _ := get(p, "spec", "ingress").([]any)
		switch {
		case get(sel, "app.kubernetes.io/name") == "rlsweep":
			workersClosed = len(ingress) == 0
		case get(sel, "app.kubernetes.io/component") == "frontend":
			frontendLimited = len(ingress) == 1
			for _, from := range get(ingress[0], "from").([]any) {
				name := get(from, "podSelector", "matchLabels", "app.kubernetes.io/name")
				if name != "rlsweep" && name != "temporal" {
					t.Errorf("NetworkPolicy %v lets %v reach the frontend, want rlsweep's workers and Temporal's pods only", get(p, "metadata", "name"), from)
				}
			}
		}
	}
	if !workersClosed {
		t.Errorf("no NetworkPolicy refuses all ingress to the rlsweep workers")
	}
	if !frontendLimited {
		t.Errorf("no NetworkPolicy limits who reaches the Temporal frontend")
	}
	for _, doc := range []string{"security.md", "deploy.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"infra/k8s/networkpolicy.yaml", "TEMPORAL_TLS_CLIENT_CERT_PATH", "RLSWEEP_ALLOW_TRAINER"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("docs/%s does not mention %s", doc, want)
			}
		}
	}
}
