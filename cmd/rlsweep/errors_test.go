package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// fakeTemporal answers as a Temporal frontend that knows the sweeps in sweeps (each with its trials'
// IDs) and nothing else; any other call panics through the nil embedded client.
type fakeTemporal struct {
	client.Client
	sweeps map[string][]string
	ended  map[string]bool // sweeps that have completed
}

func (c *fakeTemporal) known(id string) bool {
	if _, ok := c.sweeps[id]; ok {
		return true
	}
	for s, trials := range c.sweeps {
		for _, t := range trials {
			if id == s+"/trial/"+t {
				return true
			}
		}
	}
	return false
}

func (c *fakeTemporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if !c.known(id) {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	st := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	if c.ended[id] {
		st = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: st}}, nil
}

// UpdateWorkflow answers as Temporal does for a workflow that does not exist or has ended.
func (c *fakeTemporal) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if !c.known(o.WorkflowID) {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + o.WorkflowID)
	}
	if c.ended[o.WorkflowID] {
		return nil, serviceerror.NewNotFound("workflow execution already completed")
	}
	return nil, errors.New("fakeTemporal: no updates")
}

func (c *fakeTemporal) QueryWorkflow(_ context.Context, id, _ string, _ string, _ ...any) (converter.EncodedValue, error) {
	if !c.known(id) {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	return nil, errors.New("fakeTemporal: no query answers")
}

// ListWorkflow answers the query startedTrials sends, a page of 3 executions at a time.
func (c *fakeTemporal) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	for s, trials := range c.sweeps {
		if req.Query != fmt.Sprintf("RlsweepSweepId = '%s' AND RlsweepKind = 'trial'", s) {
			continue
		}
		start := 0
		if len(req.NextPageToken) > 0 {
			fmt.Sscan(string(req.NextPageToken), &start)
		}
		resp := &workflowservice.ListWorkflowExecutionsResponse{}
		for i := start; i < len(trials) && i < start+3; i++ {
			resp.Executions = append(resp.Executions, &workflowpb.WorkflowExecutionInfo{
				Execution: &commonpb.WorkflowExecution{WorkflowId: s + "/trial/" + trials[i]}})
		}
		if start+3 < len(trials) {
			resp.NextPageToken = []byte(fmt.Sprint(start + 3))
		}
		return resp, nil
	}
	return nil, fmt.Errorf("fakeTemporal: unexpected query %q", req.Query)
}

func (c *fakeTemporal) Close() {}

// TestUnknownSweepAndTrialErrors: status, watch, results and logs of a sweep or trial that does not
// exist name it and say how to list what does, instead of "workflow not found for ID".
func TestUnknownSweepAndTrialErrors(t *testing.T) {
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("%d-s1", 24-i)
	}
	fake := &fakeTemporal{sweeps: map[string][]string{
		"sweep/cartpole/ab12": {"10-s1", "2-s1", "0-s1", "1-s1", "0-s2"},
		"sweep/big/cd34":      many,
		"sweep/new/ef56":      nil,
		"sweep/done/aa11":     {"0-s1"},
	}, ended: map[string]bool{"sweep/done/aa11": true}}
	store := t.TempDir()
	for _, k := range []string{"sweeps/cartpole/ab12/spec.json", "sweeps/cartpole/ab12/trials/0-s1/logs/0/1/log.txt",
		"sweeps/cartpole/ab12/trials/1-s1/metrics/0.jsonl"} {
		p := filepath.Join(store, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		golden string
		args   []string
		code   int
	}{
		{"status-unknown-sweep", []string{"status", "cartpole/zz99"}, exitError},
		{"watch-unknown-sweep", []string{"watch", "sweep/cartpole/zz99"}, exitError},
		{"results-unknown-sweep", []string{"results", "cartpole/zz99"}, exitError},
		{"logs-unknown-sweep", []string{"logs", "cartpole/zz99/0-s1"}, exitError},
		{"status-malformed-ref", []string{"status", "cartpole"}, exitInvalid},
		{"status-unknown-trial", []string{"status", "cartpole/ab12/7-s1"}, exitError},
		{"status-unknown-trial-many", []string{"status", "big/cd34/99-s1"}, exitError},
		{"status-unknown-trial-none-started", []string{"status", "new/ef56/0-s1"}, exitError},
		{"status-trial-of-unknown-sweep", []string{"status", "cartpole/zz99/0-s1"}, exitError},
		{"logs-unknown-trial", []string{"logs", "cartpole/ab12/7-s1"}, exitError},
		{"pause-unknown-sweep", []string{"pause", "cartpole/zz99"}, exitError},
		{"set-concurrency-unknown-sweep", []string{"set-concurrency", "cartpole/zz99", "2"}, exitError},
		{"pause-ended-sweep", []string{"pause", "done/aa11"}, exitError},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			f, out, errOut := testFactory()
			f.client = fake
			code := run(context.Background(), append([]string{"--store", store}, tt.args...), f)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			if strings.Contains(errOut.String(), "workflow not found") {
				t.Errorf("stderr has Temporal's own words: %s", errOut)
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %s", out)
			}
			golden(t, "errors/"+tt.golden+".golden", strings.ReplaceAll(errOut.String(), store, "STORE"))
		})
	}
}

// TestAddressErrors: an --address (or TEMPORAL_ADDRESS) that is a URL, or that reaches a web server
// such as the Web UI instead of the gRPC frontend, says so and gives the host:port to use.
func TestAddressErrors(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>Temporal Web UI</html>")
	}))
	defer web.Close()
	webAddr := strings.TrimPrefix(web.URL, "http://")
	host, _, _ := net.SplitHostPort(webAddr)
	tests := []struct {
		golden string
		env    string
		args   []string
	}{
		{"address-http-url", "", []string{"--address", "http://localhost:7233", "list"}},
		{"address-web-ui-url", "", []string{"--address", "http://localhost:8233/", "status", "cartpole/ab12"}},
		{"address-https-no-port", "", []string{"--address", "https://temporal.example.com", "list"}},
		{"address-env-url", "http://127.0.0.1:7233", []string{"list"}},
		{"address-web-server", "", []string{"--address", webAddr, "list"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Setenv("TEMPORAL_ADDRESS", tt.env)
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != exitInvalid {
				t.Errorf("exit %d, want %d; stderr %s", code, exitInvalid, stderr)
			}
			if strings.Contains(stderr, "is a server running") || stdout != "" {
				t.Errorf("stdout %q stderr %q", stdout, stderr)
			}
			golden(t, "errors/"+tt.golden+".golden", strings.NewReplacer(webAddr, "WEBSERVER", host, "HOST").Replace(stderr))
		})
	}
}

// TestScheduleCreateAllProblems: schedule create with several bad flags, a bad spec and a baseline that
// does not exist reports every problem at once, before reaching any server.
func TestScheduleCreateAllProblems(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(spec, []byte("name: s\ntrainer:\n  command: [python, train.py, \"{{.seed}}\"]\n  total_steps: 1000\nparametres:\n  lr: {values: [0.1]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--address", "127.0.0.1:1", "--store", filepath.Join(dir, "store"),
		"schedule", "create", "bad/name", spec, "--cron", "0 3 * *", "--baseline", "nightly", "--overlap", "sometimes",
		"--catchup-window", "5", "--tolerance", "abc", "--webhook", "ftp://x")
	if code != exitInvalid || stdout != "" {
		t.Errorf("exit %d, stdout %q, want exit %d and nothing", code, stdout, exitInvalid)
	}
	golden(t, "errors/schedule-create-all.golden", strings.ReplaceAll(stderr, dir, "DIR"))
}

// TestValidateExplainSearch: validate --explain says what the search will do (start-up and guided
// configurations, re-run trials, the total; the rungs of early_terminate), and validate warns, naming
// the field, its value and the fix, where a bayes budget leaves nothing to the guided search.
func TestValidateExplainSearch(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"train.py": "",
		"wandb-bayes-run-cap-8.yaml": "program: train.py\nmethod: bayes\nrun_cap: 8\nmetric: {name: reward, goal: maximize}\n" +
			"parameters:\n  lr: {min: 0.0001, max: 0.01}\n",
		"bayes-guided.yaml": "name: guided\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 50000}\nmetric: {name: reward, goal: maximize}\n" +
			"method: bayes\ntrials: 24\nseeds: [1, 2]\nbayes: {startup_trials: 8, rerun_top: 2}\nparameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n",
		"bayes-trials-6.yaml": "name: small\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 50000}\nmetric: {name: reward, goal: maximize}\n" +
			"method: bayes\ntrials: 6\nparameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n",
		"bayes-startup-10-trials-6.yaml": "name: small\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 50000}\nmetric: {name: reward, goal: maximize}\n" +
			"method: bayes\ntrials: 6\nbayes: {startup_trials: 10}\nparameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\n",
		"median.yaml": "name: med\ntrainer: {builtin: ppo, env: CartPole-v1, total_steps: 80000, segment_steps: 20000}\nmetric: {name: reward, goal: maximize}\n" +
			"method: random\ntrials: 12\nparameters:\n  lr: {min: 0.0001, max: 0.01, distribution: log_uniform}\nearly_terminate: {type: median, min_trials: 3}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"wandb-bayes-run-cap-8.yaml", "bayes-guided.yaml", "bayes-trials-6.yaml", "bayes-startup-10-trials-6.yaml", "median.yaml", "asha"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if name == "asha" {
				path = filepath.Join("..", "..", "examples", "asha.yaml")
			}
			code, stdout, stderr := runCLI(t, "validate", "--explain", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "explain/"+strings.TrimSuffix(name, ".yaml")+".golden",
				strings.ReplaceAll(stdout+"--- stderr\n"+stderr, dir, "DIR"))
		})
	}
}
