package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store URL holding a password — in --store, RLSWEEP_STORE or a spec's artifacts key — is refused
// by every command without the password (or the access key before it) in any message.
func TestStoreURLPasswordNeverEchoed(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	const body = "name: s\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 10000}\nmetric: {name: reward, goal: maximize}\nmethod: grid\nseeds: [1]\nparameters:\n  lr: {values: [0.001]}\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	withKey := filepath.Join(dir, "with-key.yaml")
	if err := os.WriteFile(withKey, []byte(body+"artifacts: s3://AKIAKEYID:pw-123456@bucket/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RLSWEEP_HOME", dir)
	check := func(name string, args ...string) {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code == 0 {
			t.Errorf("%s: %q exited 0, want a failure", name, args)
		}
		for _, s := range []string{"pw-123456", "AKIAKEYID"} {
			if strings.Contains(out+errOut, s) {
				t.Errorf("%s: %q shows %q:\nstdout: %s\nstderr: %s", name, args, s, out, errOut)
			}
		}
	}
	check("spec", "validate", withKey)
	check("spec", "submit", "--address", "127.0.0.1:1", withKey)
	for _, store := range []string{"s3://AKIAKEYID:pw-123456@bucket/x", "https://AKIAKEYID:pw-123456@host/x", "file://AKIAKEYID:pw-123456@host/x"} {
		for _, cmd := range [][]string{{"submit", spec}, {"results", "s/abc"}, {"report", "s/abc"}, {"status", "s/abc"},
			{"watch", "s/abc"}, {"worker"}} {
			check("--store", append([]string{"--address", "127.0.0.1:1", "--store", store}, cmd...)...)
			t.Setenv("RLSWEEP_STORE", store)
			check("RLSWEEP_STORE", append([]string{"--address", "127.0.0.1:1"}, cmd...)...)
			os.Unsetenv("RLSWEEP_STORE")
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		for _, e := range entries {
			if strings.Contains(e.Name(), "pw-123456") {
				t.Errorf("a store directory was created: %s", e.Name())
				os.RemoveAll(e.Name())
			}
		}
	}
}

func TestWorkerSecretEnvNames(t *testing.T) {
	code, _, errOut := runCLI(t, "worker", "--secret-env", "WANDB_API_KEY,bad name")
	if code != exitInvalid || !strings.Contains(errOut, `--secret-env: got "bad name", want environment variable names`) {
		t.Errorf("worker --secret-env 'bad name': exit %d, stderr %q; want exit 2 naming the flag", code, errOut)
	}
	t.Setenv("RLSWEEP_SECRET_ENV", "HF_TOKEN,x-y")
	code, _, errOut = runCLI(t, "worker")
	if code != exitInvalid || !strings.Contains(errOut, `RLSWEEP_SECRET_ENV: got "x-y", want environment variable names`) {
		t.Errorf("RLSWEEP_SECRET_ENV=HF_TOKEN,x-y: exit %d, stderr %q; want exit 2 naming the variable", code, errOut)
	}
}

// The worker's secrets include what its Temporal profile file holds, besides its environment.
func TestWorkerSecretsFromTemporalProfile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "client.key")
	if err := os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\nprofile-tls-key-body\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "temporal.toml")
	toml := "[profile.default]\naddress = \"127.0.0.1:1\"\napi_key = \"profile-api-key-123\"\n[profile.default.tls]\nclient_key_path = \"" + key + "\"\n"
	if err := os.WriteFile(conf, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", conf)
	t.Setenv("WANDB_API_KEY", "wandb-key-123")
	got := workerSecrets(&Factory{}, []string{"WANDB_API_KEY"})
	for name, want := range map[string]string{"TEMPORAL_API_KEY": "profile-api-key-123", "WANDB_API_KEY": "wandb-key-123"} {
		if got[name] != want {
			t.Errorf("secret %s = %q, want %q", name, got[name], want)
		}
	}
	if !strings.Contains(got["TEMPORAL_TLS_CLIENT_KEY"], "profile-tls-key-body") {
		t.Errorf("secrets = %v, want the profile's TLS key", got)
	}
	if local := workerSecrets(&Factory{Local: true}, nil); local["TEMPORAL_API_KEY"] != "" {
		t.Errorf("a worker of rlsweep dev took the profile's API key: %v", local)
	}
}

// A marked variable whose value is too short to mask is named at the worker's start.
func TestWorkerWarnsOfShortSecrets(t *testing.T) {
	t.Setenv("RLSWEEP_SECRET_ENV", "SHORT_TOKEN,LONG_TOKEN")
	t.Setenv("SHORT_TOKEN", "abc")
	t.Setenv("LONG_TOKEN", "long-enough-123")
	t.Setenv("FLAG_TOKEN", "xy")
	f, _, errOut := testFactory()
	f.StoreURL = t.TempDir()
	a, err := newActivities(f, &WorkerOptions{SecretEnv: []string{"FLAG_TOKEN"}, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"SHORT_TOKEN", "FLAG_TOKEN"} {
		if !strings.Contains(errOut.String(), "warning: "+name+" is marked secret but its value is shorter than 6 characters") {
			t.Errorf("stderr %q does not name %s", errOut, name)
		}
	}
	if strings.Contains(errOut.String(), "LONG_TOKEN") {
		t.Errorf("stderr %q names LONG_TOKEN, whose value is masked", errOut)
	}
	if got := a.Secrets.MaskString("token long-enough-123"); got != "token [secret LONG_TOKEN]" {
		t.Errorf("the worker's masker gives %q, want the marked value masked", got)
	}
}
