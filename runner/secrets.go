package runner

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// EnvSecretEnv names, comma-separated, the worker's environment variables whose values are secrets
// besides the ones rlsweep knows (worker --secret-env adds to it): their values are masked in every
// trainer output that leaves the worker.
const EnvSecretEnv = "RLSWEEP_SECRET_ENV"

// MinSecretLen is the shortest value masked: shorter ones would match too much ordinary output.
const MinSecretLen = 6

// knownSecretEnv are the variables whose values are credentials the worker holds: its AWS keys (the
// store's) and its Temporal connection's API key, TLS key, codec auth.
var knownSecretEnv = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
	"TEMPORAL_API_KEY", "TEMPORAL_TLS_CLIENT_KEY_DATA", "TEMPORAL_CODEC_AUTH",
}

// secretFileEnv name files whose contents are secrets (the Temporal TLS client key).
var secretFileEnv = []string{"TEMPORAL_TLS_CLIENT_KEY_PATH"}

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidEnvName reports whether name can name an environment variable.
func ValidEnvName(name string) bool { return envName.MatchString(name) }

// WorkerSecrets collects the secret values of a worker's environment (os.Environ's form), by the name
// each is masked as: the AWS credentials, the Temporal API key, TLS client key (its data or the
// contents of the file named) and codec auth, every TEMPORAL_GRPC_META_* header, and the variables
// named by RLSWEEP_SECRET_ENV and extra.
func WorkerSecrets(environ []string, extra ...string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	out := map[string]string{}
	add := func(name, value string) {
		if value != "" {
			out[name] = value
		}
	}
	for _, k := range knownSecretEnv {
		add(k, env[k])
	}
	for k, v := range env {
		if strings.HasPrefix(k, "TEMPORAL_GRPC_META_") {
			add(k, v)
		}
	}
	for _, k := range secretFileEnv {
		if p := env[k]; p != "" {
			if b, err := os.ReadFile(p); err == nil {
				add(k, string(b))
			}
		}
	}
	for _, k := range append(strings.Split(env[EnvSecretEnv], ","), extra...) {
		if k = strings.TrimSpace(k); ValidEnvName(k) {
			add(k, env[k])
		}
	}
	return out
}

// SecretEnvNames names the variables of environ (os.Environ's form) whose values WorkerSecrets
// treats as secrets: the AWS credentials, the Temporal API key, TLS client key data and codec auth,
// every TEMPORAL_GRPC_META_* header, and the variables named by RLSWEEP_SECRET_ENV and extra. Each
// is named once, in environ's order, when it is set (even to ""); a file's name
// (TEMPORAL_TLS_CLIENT_KEY_PATH) is not a secret and is not named.
func SecretEnvNames(environ []string, extra ...string) []string {
	marked := map[string]bool{}
	for _, k := range knownSecretEnv {
		marked[k] = true
	}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == EnvSecretEnv {
			extra = append(strings.Split(v, ","), extra...)
		}
	}
	for _, k := range extra {
		if k = strings.TrimSpace(k); ValidEnvName(k) {
			marked[k] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || seen[k] || !(marked[k] || strings.HasPrefix(k, "TEMPORAL_GRPC_META_")) {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}

// Masker replaces secret values in text with "[secret NAME]". The zero Masker masks nothing.
type Masker struct {
	secrets []secret // longest first, so a secret holding another is masked whole
	names   sync.Map // MaskName's answers: name → masked name
	nNames  atomic.Int32
}

// maxNames bounds how many names MaskName remembers: a trainer's metric names are few, but nothing
// stops one from inventing a name per record.
const maxNames = 4096

type secret struct {
	name  string
	value []byte
}

// NewMasker masks the values of secrets (name → value). Values shorter than MinSecretLen are left
// alone; a value of several lines (a PEM key) is masked whole and line by line, so a cut of it is too.
func NewMasker(secrets map[string]string) *Masker {
	m := &Masker{}
	seen := map[string]bool{}
	add := func(name, v string) {
		if len(v) < MinSecretLen || seen[v] {
			return
		}
		seen[v] = true
		m.secrets = append(m.secrets, secret{name: name, value: []byte(v)})
	}
	for name, v := range secrets {
		add(name, v)
		if strings.Contains(v, "\n") {
			for line := range strings.SplitSeq(v, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "-----") { // PEM armour is no secret
					add(name, line)
				}
			}
		}
	}
	sort.Slice(m.secrets, func(i, j int) bool {
		a, b := m.secrets[i], m.secrets[j]
		if len(a.value) != len(b.value) {
			return len(a.value) > len(b.value)
		}
		return a.name < b.name
	})
	return m
}

// Len is how many values m masks.
func (m *Masker) Len() int {
	if m == nil {
		return 0
	}
	return len(m.secrets)
}

// longest is the length of the longest value m masks.
func (m *Masker) longest() int {
	if m.Len() == 0 {
		return 0
	}
	return len(m.secrets[0].value)
}

// Mask returns b with every occurrence of a secret value replaced by "[secret NAME]", and a secret cut
// at b's end (at least MinSecretLen of its beginning: output that stopped in the middle of it) too. b
// is not modified.
func (m *Masker) Mask(b []byte) []byte {
	if m.Len() == 0 {
		return b
	}
	out := b
	for _, s := range m.secrets {
		if bytes.Contains(out, s.value) {
			out = bytes.ReplaceAll(out, s.value, []byte("[secret "+s.name+"]"))
		}
	}
	for _, s := range m.secrets {
		for n := min(len(s.value)-1, len(out)); n >= MinSecretLen; n-- {
			if bytes.HasSuffix(out, s.value[:n]) {
				out = append(out[:len(out)-n:len(out)-n], "[secret "+s.name+"]"...)
				break
			}
		}
	}
	return out
}

// MaskString is Mask of a string.
func (m *Masker) MaskString(s string) string {
	if m.Len() == 0 {
		return s
	}
	return string(m.Mask([]byte(s)))
}

// MaskName is MaskString of a name a trainer chose (a metric name, a checkpoint's name), remembering
// the answers for the names seen most: the same names come with every record.
func (m *Masker) MaskName(name string) string {
	if m.Len() == 0 {
		return name
	}
	if v, ok := m.names.Load(name); ok {
		return v.(string)
	}
	masked := m.MaskString(name)
	if m.nNames.Add(1) <= maxNames {
		m.names.Store(name, masked)
	}
	return masked
}

// WithoutSecrets is environ (os.Environ's form) without the variables SecretEnvNames names: the
// environment of a helper program the worker runs (nvidia-smi, the dev server), which any process of
// the user can read in /proc.
func WithoutSecrets(environ []string) []string {
	names := SecretEnvNames(environ)
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}
