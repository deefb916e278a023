package artifacts_test

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rlsweep/rlsweep/artifacts"
)

func TestCleanKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool // accepted
	}{
		{"spec.yaml", true},
		{"sweeps/demo/abc/plan.json", true},
		{"sweeps/demo/abc/trials/0-s1/checkpoints/ckpt-1000.json", true},
		{"a b/c-d_e.f", true},
		{"...", true}, // three dots is a plain name, not a parent reference
		{"", false},
		{"/abs", false},
		{"/", false},
		{"a/../b", false},
		{"..", false},
		{"../x", false},
		{"a/..", false},
		{".", false},
		{"a/./b", false},
		{"a//b", false},
		{"a/", false},
		{"a\\b", false},
		{"..\\..\\etc", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\tb", false},
		{"a\x7fb", false},
		{"a\u200bb", false},     // zero-width space (Cf)
		{"a\u202eb", false},     // right-to-left override (Cf)
		{"a\ufeffb", false},     // byte-order mark (Cf)
		{"a\U000e0001b", false}, // language tag (Cf, outside the BMP)
		{"a\u0085b", false},     // NEL (Cc)
		{"a\xffb", false},       // invalid UTF-8
		{"\xc0\xaf", false},     // overlong '/'
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := artifacts.CleanKey(tt.key)
			if tt.want {
				if err != nil || got != tt.key {
					t.Errorf("CleanKey(%q) = %q, %v, want it unchanged and no error", tt.key, got, err)
				}
				return
			}
			if err == nil {
				t.Errorf("CleanKey(%q) = %q, nil, want an error", tt.key, got)
			}
		})
	}
}

// checkSegment asserts what Segment promises for any input.
func checkSegment(t *testing.T, in, got string) {
	t.Helper()
	if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\") || len(got) > 128 {
		t.Errorf("Segment(%q) = %q, want one non-empty segment of at most 128 bytes, not . or ..", in, got)
	}
	if strings.Trim(got, ".") == "" {
		t.Errorf("Segment(%q) = %q, want more than dots", in, got)
	}
	for i := 0; i < len(got); i++ {
		c := got[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			t.Errorf("Segment(%q) = %q holds byte %q, want only [A-Za-z0-9._-]", in, got, c)
			break
		}
	}
	if _, err := artifacts.CleanKey(got); err != nil {
		t.Errorf("Segment(%q) = %q fails CleanKey: %v", in, got, err)
	}
}

func TestSegment(t *testing.T) {
	tests := []struct {
		in, want string // want "" means: only the invariants are checked
	}{
		{"0-s1", "0-s1"},
		{"lr_3e-4.v2", "lr_3e-4.v2"},
		{"../../etc", ".._.._etc"},
		{"/etc/passwd", "_etc_passwd"},
		{"a/b", "a_b"},
		{"..", "_.."},
		{".", "_."},
		{"...", "_..."},
		{"", "_"},
		{"a\x00b\nc", "a_b_c"},
		{"ｆｏｏ", "___"}, // fullwidth letters are not ASCII
		{"Ꭺ", "_"},     // Cherokee A looks like A
		{"é", "_"},
		{"a\u202eb", "a_b"},
		{"\xff\xfe", "__"},
		{"a\\b", "a_b"},
		{strings.Repeat("x", 500), strings.Repeat("x", 128)},
		{strings.Repeat(".", 500), ""},
		{strings.Repeat(".", 200) + "a", ""},
		{strings.Repeat("é", 300), ""},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got := artifacts.Segment(tt.in)
			checkSegment(t, tt.in, got)
			if tt.want != "" && got != tt.want {
				t.Errorf("Segment(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// hostile are sweep IDs and trial IDs an attacker or a careless user could write.
var hostile = []string{
	"", ".", "..", "../..", "../../../etc/passwd", "/etc/passwd", "sweep/../../x", "sweep/", "sweep//",
	"sweep/a/../../../b", "a\\..\\..\\b", "a\x00b", "ｆｏｏ/..", "sweep/.", "sweep/..", "//", "/",
	strings.Repeat("../", 200), strings.Repeat("a", 500), "\u202e..", ".tmp-x",
}

// checkUnderSweeps asserts key passes CleanKey and stays under sweeps/ after path.Clean.
func checkUnderSweeps(t *testing.T, key string, args ...any) {
	t.Helper()
	if _, err := artifacts.CleanKey(key); err != nil {
		t.Errorf("key %q from %q fails CleanKey: %v", key, args, err)
	}
	if c := path.Clean(key); c != key || !strings.HasPrefix(c, "sweeps/") || path.IsAbs(c) {
		t.Errorf("key %q from %q cleans to %q, want itself, under sweeps/", key, args, c)
	}
}

func TestKeysStayUnderSweeps(t *testing.T) {
	for _, sweep := range hostile {
		for _, trial := range hostile {
			k := artifacts.MetricsDir(sweep, trial)
			checkUnderSweeps(t, k, sweep, trial)
			if !strings.HasSuffix(k, "/trials/"+artifacts.Segment(trial)+"/metrics") {
				t.Errorf("MetricsDir(%q, %q) = %q, want the trial's own folder", sweep, trial, k)
			}
		}
		checkUnderSweeps(t, artifacts.PlanKey(sweep), sweep)
	}
}

func TestSweepDir(t *testing.T) {
	tests := []struct{ sweep, want string }{
		{"sweep/demo/ab12", "sweeps/demo/ab12"},
		{"demo", "sweeps/demo"},
		{"sweep/../../etc", "sweeps/_../_../etc"},
		{"sweep/a/b/c", "sweeps/a/b/c"},
	}
	for _, tt := range tests {
		if got := artifacts.SweepDir(tt.sweep); got != tt.want {
			t.Errorf("SweepDir(%q) = %q, want %q", tt.sweep, got, tt.want)
		}
	}
	if got, want := artifacts.DivergenceKey("sweep/demo/ab12", "3-s2"),
		"sweeps/demo/ab12/trials/3-s2/divergence.json"; got != want {
		t.Errorf("DivergenceKey = %q, want %q", got, want)
	}
}

func FuzzKeys(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, "0-s1")
		f.Add("sweep/demo/x", s)
	}
	f.Fuzz(func(t *testing.T, sweepID, trialID string) {
		for _, k := range []string{artifacts.MetricsPartKey(sweepID, trialID, 0, 1, 0), artifacts.LogPartKey(sweepID, trialID, 0, 1, 0),
			artifacts.CheckpointKey(sweepID, trialID, "ckpt-1.json"), artifacts.ResumePointKey(sweepID, trialID),
			artifacts.DivergenceKey(sweepID, trialID)} {
			checkUnderSweeps(t, k, sweepID, trialID)
		}
		for _, k := range []string{artifacts.PlanKey(sweepID), artifacts.ResultsPartKey(sweepID, 3), artifacts.ReportKey(sweepID)} {
			checkUnderSweeps(t, k, sweepID)
		}
		checkSegment(t, trialID, artifacts.Segment(trialID))
		if !utf8.ValidString(artifacts.Segment(sweepID)) {
			t.Errorf("Segment(%q) is not valid UTF-8", sweepID)
		}
	})
}

func TestBaselineKey(t *testing.T) {
	for ref, want := range map[string]string{
		"nightly":              "baselines/nightly.json",
		"sweep/cartpole/ab12":  artifacts.ResultsKey("sweep/cartpole/ab12"),
		"some/where/base.json": "some/where/base.json",
	} {
		if got := artifacts.BaselineKey(ref); got != want {
			t.Errorf("BaselineKey(%q) = %q, want %q", ref, got, want)
		}
	}
}
