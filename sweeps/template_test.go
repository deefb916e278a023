package sweeps

import (
	"reflect"
	"strings"
	"testing"
)

func TestRenderCommand(t *testing.T) {
	data := TemplateData{SweepID: "sw", TrialID: "3-s2", Seed: 2, TotalSteps: 1000, StopAtStep: 500,
		Params: map[string]any{"lr": 3e-4, "n": int64(8), "name": "a b; rm -rf /", "flag": true, "x.y": 1.5}}
	tests := []struct {
		argv, want []string
	}{
		{[]string{"python", "train.py"}, []string{"python", "train.py"}},
		{[]string{"--lr={{.Params.lr}}", "--n", "{{.Params.n}}"}, []string{"--lr=0.0003", "--n", "8"}},
		// A value with spaces and shell syntax stays one argument, untouched.
		{[]string{"--name={{.Params.name}}"}, []string{"--name=a b; rm -rf /"}},
		{[]string{"{{.SweepID}}/{{.TrialID}}", "{{.Seed}}", "{{.StopAtStep}}/{{.TotalSteps}}"}, []string{"sw/3-s2", "2", "500/1000"}},
		{[]string{`{{if .ResumeFrom}}--resume={{.ResumeFrom}}{{else}}--fresh{{end}}`}, []string{"--fresh"}},
		{[]string{`{{index .Params "x.y"}}`, "{{.Params.flag}}"}, []string{"1.5", "true"}},
		{[]string{""}, []string{""}},
	}
	for _, tt := range tests {
		got, err := RenderCommand(tt.argv, data)
		if err != nil {
			t.Errorf("RenderCommand(%q) error %v", tt.argv, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("RenderCommand(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestRenderCommandErrors(t *testing.T) {
	data := TemplateData{Params: map[string]any{"lr": 0.1}}
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"x", "{{.Params.lrr}}"}, `command[1] "{{.Params.lrr}}"`},
		{[]string{"{{.Nope}}"}, "can't evaluate field Nope"},
		{[]string{"{{.Params.lr"}, "parse command[0]"},
		{[]string{"{{range 1000000000}}x{{end}}"}, "range is not allowed"},
		{[]string{"{{if .Seed}}{{range .Params}}{{end}}{{end}}"}, "range is not allowed"},
		{[]string{`{{define "a"}}{{template "a"}}{{end}}`}, "define and block are not allowed"},
		{[]string{`{{block "a" .}}x{{end}}`}, "not allowed"},
	}
	for _, tt := range tests {
		if _, err := RenderCommand(tt.argv, data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("RenderCommand(%q) = %v, want an error containing %q", tt.argv, err, tt.want)
		}
	}
}
