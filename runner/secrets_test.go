package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leaks returns the first piece of secret, at least MinSecretLen long, that s holds; "" when none.
func leaks(s, secret string) string {
	for n := len(secret); n >= MinSecretLen; n-- {
		for i := 0; i+n <= len(secret); i++ {
			if strings.Contains(s, secret[i:i+n]) {
				return secret[i : i+n]
			}
		}
	}
	return ""
}

func TestMasker(t *testing.T) {
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n"
	m := NewMasker(map[string]string{
		"AWS_SECRET_ACCESS_KEY":        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_ACCESS_KEY_ID":            "AKIAIOSFODNN7EXAMPLE",
		"SHORT":                        "abc12", // below MinSecretLen: too many false hits
		"INNER":                        "K7MDENG/bPx",
		"TEMPORAL_TLS_CLIENT_KEY_PATH": pem,
	})
	cases := []struct{ in, want string }{
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
			"AWS_SECRET_ACCESS_KEY=[secret AWS_SECRET_ACCESS_KEY]\nAWS_ACCESS_KEY_ID=[secret AWS_ACCESS_KEY_ID]\n"},
		{"twice AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLE.", "twice [secret AWS_ACCESS_KEY_ID] [secret AWS_ACCESS_KEY_ID]."},
		{"a value inside another is masked with it: K7MDENG/bPx alone", "a value inside another is masked with it: [secret INNER] alone"},
		{"short values stay: abc12", "short values stay: abc12"},
		{"the whole key: " + pem, "the whole key: [secret TEMPORAL_TLS_CLIENT_KEY_PATH]"},
		{"one line of it: BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj!", "one line of it: [secret TEMPORAL_TLS_CLIENT_KEY_PATH]!"},
		{"-----BEGIN PRIVATE KEY----- alone is no secret", "-----BEGIN PRIVATE KEY----- alone is no secret"},
		{"output cut inside a secret: wJalrXUtnF", "output cut inside a secret: [secret AWS_SECRET_ACCESS_KEY]"},
		{"too little of it to tell: wJalr", "too little of it to tell: wJalr"},
		{"nothing secret", "nothing secret"},
	}
	for _, c := range cases {
		in := []byte(c.in)
		if got := string(m.Mask(in)); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
		if string(in) != c.in {
			t.Errorf("Mask modified its input: %q", in)
		}
		if got := m.MaskString(c.in); got != c.want {
			t.Errorf("MaskString(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var none *Masker
	if got := none.MaskString("AKIAIOSFODNN7EXAMPLE"); got != "AKIAIOSFODNN7EXAMPLE" {
		t.Errorf("a nil Masker changed %q", got)
	}
}

func TestWorkerSecrets(t *testing.T) {
	key := filepath.Join(t.TempDir(), "client.key")
	if err := os.WriteFile(key, []byte("tls-key-contents-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY=aws-secret-123", "AWS_SESSION_TOKEN=aws-token-123",
		"AWS_REGION=us-east-1", "TEMPORAL_API_KEY=temporal-key-123", "TEMPORAL_TLS_CLIENT_KEY_PATH=" + key,
		"TEMPORAL_GRPC_META_AUTHORIZATION=Bearer grpc-123", "TEMPORAL_ADDRESS=host:7233",
		"RLSWEEP_SECRET_ENV=WANDB_API_KEY, HF_TOKEN,not a name,UNSET", "WANDB_API_KEY=wandb-123", "HF_TOKEN=hf-123",
		"EXTRA_TOKEN=extra-123", "HOME=/root",
	}
	got := WorkerSecrets(env, "EXTRA_TOKEN")
	want := map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "aws-secret-123", "AWS_SESSION_TOKEN": "aws-token-123",
		"TEMPORAL_API_KEY": "temporal-key-123", "TEMPORAL_TLS_CLIENT_KEY_PATH": "tls-key-contents-123",
		"TEMPORAL_GRPC_META_AUTHORIZATION": "Bearer grpc-123", "WANDB_API_KEY": "wandb-123", "HF_TOKEN": "hf-123",
		"EXTRA_TOKEN": "extra-123",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("WorkerSecrets = %v\nwant %v", got, want)
	}
}

// A tail cut anywhere around a secret shows no piece of it MinSecretLen long.
func TestTailFileMasksSecrets(t *testing.T) {
	const s = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	m := NewMasker(map[string]string{"AWS_SECRET_ACCESS_KEY": s, "OTHER": "0123456789abcdef"})
	p := filepath.Join(t.TempDir(), "log")
	for _, text := range []string{"env: " + s + "\nTraceback: boom\n", "x" + s, s + "\nend", "env: " + s} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for n := int64(1); n <= int64(len(text))+2; n++ {
			got := TailFile(p, n, m)
			if l := leaks(got, s); l != "" {
				t.Errorf("TailFile(%q, %d) = %q: holds %q", text, n, got, l)
			}
			if int64(len(got)) > n {
				t.Errorf("TailFile(%q, %d) = %q: longer than %d", text, n, got, n)
			}
		}
		if got := TailFile(p, 4096, m); !strings.Contains(got, "[secret AWS_SECRET_ACCESS_KEY]") {
			t.Errorf("TailFile(%q) = %q, want the secret's mark", text, got)
		}
	}
}

// SecretEnvNames names the set credential variables, the gRPC headers and the marked ones, each once;
// not a key file's path, nor unset or unrelated variables.
func TestSecretEnvNames(t *testing.T) {
	environ := []string{"PATH=/bin", "AWS_SECRET_ACCESS_KEY=s3cret", "AWS_REGION=us-east-1", "TEMPORAL_API_KEY=",
		"TEMPORAL_TLS_CLIENT_KEY_PATH=/k.pem", "TEMPORAL_GRPC_META_X_TOKEN=t", "RLSWEEP_SECRET_ENV=HF_TOKEN, WANDB_API_KEY,bad name",
		"HF_TOKEN=hf", "WANDB_API_KEY=w", "FLAGGED=f", "AWS_SECRET_ACCESS_KEY=again"}
	got := strings.Join(SecretEnvNames(environ, "FLAGGED", "ABSENT"), ",")
	want := "AWS_SECRET_ACCESS_KEY,TEMPORAL_API_KEY,TEMPORAL_GRPC_META_X_TOKEN,HF_TOKEN,WANDB_API_KEY,FLAGGED"
	if got != want {
		t.Errorf("SecretEnvNames = %s, want %s", got, want)
	}
}

// MaskName masks a name as MaskString does, and answers the same from memory.
func TestMaskName(t *testing.T) {
	m := NewMasker(map[string]string{"HF_TOKEN": "hf_abcdefghij"})
	for range 2 {
		if got := m.MaskName("loss/hf_abcdefghij"); got != "loss/[secret HF_TOKEN]" {
			t.Errorf("MaskName = %q, want loss/[secret HF_TOKEN]", got)
		}
		if got := m.MaskName("reward"); got != "reward" {
			t.Errorf("MaskName(reward) = %q", got)
		}
	}
	var none *Masker
	if got := none.MaskName("hf_abcdefghij"); got != "hf_abcdefghij" {
		t.Errorf("a nil Masker's MaskName = %q, want the name", got)
	}
}
