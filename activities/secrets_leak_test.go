package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rlsweep/rlsweep/activities"
	"github.com/rlsweep/rlsweep/artifacts"
	"github.com/rlsweep/rlsweep/metrics"
	"github.com/rlsweep/rlsweep/runner"
	"github.com/rlsweep/rlsweep/sweeps"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/trainer/probes"
)

// canaries puts credentials in the worker's environment — AWS keys, a Temporal API key, a variable
// marked secret by RLSWEEP_SECRET_ENV — and writes them to a file a trainer can print (as one that read
// them from its parent would). It returns the values and the file.
func canaries(t *testing.T) ([]string, string) {
	t.Helper()
	vals := map[string]string{
		"AWS_ACCESS_KEY_ID":     "AKIACANARY7AWSKEYID1",
		"AWS_SECRET_ACCESS_KEY": "canary-aws-secret/wJalrXUtnFEMI+K7MDENG",
		"AWS_SESSION_TOKEN":     "canary-aws-sts-token-FwoGZXIvYXdzEJr",
		"TEMPORAL_API_KEY":      "canary-temporal-api-key-eyJhbGciOiJFUzI1NiJ9",
		"MY_MARKED_TOKEN":       "canary-marked-token-hf_abcdefgh",
	}
	t.Setenv(runner.EnvSecretEnv, "MY_MARKED_TOKEN")
	var lines, out []string
	for k, v := range vals {
		t.Setenv(k, v)
		lines = append(lines, k+"="+v)
		out = append(out, v)
	}
	file := filepath.Join(t.TempDir(), "canaries")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, file
}

// noCanary fails the test if s holds any canary.
func noCanary(t *testing.T, where, s string, vals []string) {
	t.Helper()
	for _, v := range vals {
		if strings.Contains(s, v) {
			t.Errorf("%s holds the canary %q:\n%s", where, v, s)
		}
	}
}

// failureJSON is err as the server would record it: the failure with its message, details and causes.
func failureJSON(t *testing.T, err error) string {
	t.Helper()
	b, merr := protojson.Marshal(temporal.GetDefaultFailureConverter().ErrorToFailure(err))
	if merr != nil {
		t.Fatal(merr)
	}
	return string(b)
}

// noCanaryStored checks every object in the store but the trainer's own logs for the canaries.
func (f *fixture) noCanaryStored(t *testing.T, vals []string) {
	t.Helper()
	logs := 0
	err := filepath.WalkDir(f.store.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "logs" {
			logs++ // the trainer's stdout log keeps what it printed
			return nil
		}
		noCanary(t, "stored "+p, string(b), vals)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logs == 0 {
		t.Error("no trainer log was stored")
	}
}

// printEnv is a trainer's start: it prints its environment and the worker's credentials.
const printEnv = `env; cat "$CANARY_FILE"; `

// A trainer that prints the worker's credentials and then crashes, stalls or diverges: no canary in the
// failure (message, details) nor in any stored object but its own log.
func TestTrainSegmentMasksWorkerSecrets(t *testing.T) {
	cases := []struct {
		name, script, typ string
	}{
		{"crash", `printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"; exit 3`, activities.ErrTrainerCrashed},
		{"stall", `printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"; sleep 30`, activities.ErrTrialStalled},
		{"diverge", `printf '{"step":1000,"reward":1}\n{"step":2000,"value_loss":NaN}\n' >> "$RLSWEEP_METRICS_FILE"`, activities.ErrTrialDiverged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals, file := canaries(t)
			f := newFixture(t)
			in := f.input(100000, nil)
			in.Trainer.Environment["CANARY_FILE"] = file
			in.Trainer.Command = shellTrainer(printEnv + c.script)
			in.Trainer.StallTimeout = time.Second
			in.Trainer.GracePeriod = 200 * time.Millisecond
			_, err := f.run(in)
			ae := appError(t, err, c.typ)
			if c.typ != activities.ErrTrialDiverged && !strings.Contains(ae.Error(), "[secret AWS_SECRET_ACCESS_KEY]") {
				t.Errorf("error %q lacks the masked log tail", ae.Error())
			}
			noCanary(t, "the error", ae.Error(), vals)
			noCanary(t, "the failure", failureJSON(t, err), vals)
			f.noCanaryStored(t, vals)
			if c.typ == activities.ErrTrialDiverged {
				var det activities.DivergedDetails
				if err := ae.Details(&det); err != nil {
					t.Fatal(err)
				}
				var dump sweepstore.Divergence
				if err := json.Unmarshal([]byte(f.read(det.DumpKey)), &dump); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(dump.LogTail, "[secret MY_MARKED_TOKEN]") {
					t.Errorf("the dump's log tail %q lacks the masked output", dump.LogTail)
				}
			}
		})
	}
}

// A probe trainer that prints the worker's credentials and crashes: no canary in the probe results,
// the diagnosis, nor probes.json.
func TestProbeMasksWorkerSecrets(t *testing.T) {
	vals, file := canaries(t)
	store := newFixture(t).store
	a := &activities.Activities{WorkDir: t.TempDir(), Store: store}
	var results []activities.ProbeResult
	for _, id := range probes.IDs()[:2] {
		r, err := a.RunProbe(context.Background(), activities.ProbeInput{SweepID: sweepID, Probe: string(id),
			Trainer: sweeps.Trainer{Command: []string{"true"}, Environment: map[string]string{"CANARY_FILE": file}}, Command: []string{"sh", "-c", printEnv + "exit 1"}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Error, "[secret TEMPORAL_API_KEY]") {
			t.Errorf("probe error %q lacks the masked log tail", r.Error)
		}
		noCanary(t, "probe "+string(id)+"'s result", r.Error, vals)
		results = append(results, *r)
	}
	rep, err := a.RecordProbes(context.Background(), activities.RecordProbesInput{SweepID: sweepID, Results: results})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	noCanary(t, "the probe report", string(b), vals)
	f := &fixture{t: t, store: store}
	noCanary(t, "probes.json", f.read(artifacts.ProbesKey(sweepID)), vals)
}

// The worker's AWS settings (its store's credentials) never reach a trainer; the spec's
// trainer.environment may give one its own.
func TestTrainerGetsNoWorkerAWSSettings(t *testing.T) {
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIACANARY7AWSKEYID1", "AWS_SECRET_ACCESS_KEY": "worker-secret-key",
		"AWS_SESSION_TOKEN": "worker-sts-token", "AWS_REGION": "eu-west-3", "AWS_ENDPOINT_URL_S3": "http://minio:9000"} {
		t.Setenv(k, v)
	}
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "env")
	in := f.input(1000, nil)
	in.Trainer.Environment["AWS_PROFILE"] = "trainer-own"
	in.Trainer.Command = shellTrainer(`env > "` + out + `"; printf '{"step":1000,"reward":1}\n' >> "$RLSWEEP_METRICS_FILE"`)
	if _, err := f.run(in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var aws []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "AWS_") {
			aws = append(aws, line)
		}
	}
	if len(aws) != 1 || aws[0] != "AWS_PROFILE=trainer-own" {
		t.Errorf("the trainer's AWS variables = %q, want only the spec's AWS_PROFILE=trainer-own", aws)
	}
}

// A trainer that uses a marked secret as a metric name and as its checkpoint's name: the result, the
// stored metrics and the object keys hold its masked form.
func TestTrainSegmentMasksSecretNames(t *testing.T) {
	vals, _ := canaries(t)
	f := newFixture(t)
	in := f.input(1000, nil)
	in.Trainer.Command = shellTrainer(`mkdir -p "$RLSWEEP_CHECKPOINT_DIR/d-$MY_MARKED_TOKEN" && echo x > "$RLSWEEP_CHECKPOINT_DIR/d-$MY_MARKED_TOKEN/c.pt"
printf '{"step":1000,"reward":1,"loss/%s":2,"checkpoint":"d-%s/c.pt"}\n' "$MY_MARKED_TOKEN" "$MY_MARKED_TOKEN" >> "$RLSWEEP_METRICS_FILE"`)
	res, err := f.run(in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	noCanary(t, "the result", string(b), vals)
	if want := "checkpoints/d-[secret MY_MARKED_TOKEN]/c.pt"; !strings.HasSuffix(res.CheckpointKey, want) {
		t.Errorf("checkpoint key %q, want it to end in %s", res.CheckpointKey, want)
	}
	var stored bytes.Buffer
	if err := artifacts.CopyMetrics(context.Background(), f.store, in.SweepID, in.Trial.ID, metrics.LineStep, &stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored.String(), `"loss/[secret MY_MARKED_TOKEN]":2`) {
		t.Errorf("the stored metrics %s lack the masked metric name", stored.String())
	}
	if got := f.read(res.CheckpointKey); got != "x\n" {
		t.Errorf("the stored checkpoint holds %q, want the file the trainer wrote", got)
	}
	f.noCanaryStored(t, vals)
	err = filepath.WalkDir(f.store.Root(), func(p string, _ fs.DirEntry, err error) error {
		noCanary(t, "a stored key", p, vals)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

}
