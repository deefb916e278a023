//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/rlsweep/rlsweep/results"
	"github.com/rlsweep/rlsweep/scheduler"
	"github.com/rlsweep/rlsweep/sweepstore"
	"github.com/rlsweep/rlsweep/workflows"
)

// TestChaosASHASweep: an asha sweep on two workers while one worker is SIGKILLed (its trials go on on
// the other, from their checkpoints) and the dev server is SIGKILLed and restarted. The sweep
// completes; each trial's outcome is recorded once and none failed; the best configuration completes;
// every trial the scheduler stopped has exactly one stop in the stored decision log and no other
// trial has any; and the log holds exactly the decisions the sweep's workflow runs sent to their
// trials (a decision sent again to a trial that asked again is the same decision, not a new one).
func TestChaosASHASweep(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault scenario of about two minutes")
	}
	// Records of 1,000 steps, 2.5 a second, a checkpoint every 2; rungs at 4,000 and 12,000 of 36,000.
	e, sweepID, sent := adaptiveSweepUnderFaults(t, "chaosasha", 4, `
  total_steps: 36000
method: grid
seeds: [1, 2]
parameters:
  quality: {values: [90, 10, 80, 20, 70, 30]}
  sleep_ms: {value: 400}
  checkpoint_every: {value: 2}
early_terminate: {type: asha, min_steps: 4000, eta: 3}
order: listed  # the assertions follow the listed arrival order: quality 90 first
probes: {enabled: false}
concurrency: 8
`)

	res := e.results(sweepID)
	if len(res.Trials) != 12 {
		t.Fatalf("results.json has %d trials, want 12", len(res.Trials))
	}
	byID := map[string]results.TrialSummary{}
	for _, tr := range res.Trials {
		if _, dup := byID[tr.TrialID]; dup {
			t.Errorf("trial %s recorded twice", tr.TrialID)
		}
		byID[tr.TrialID] = tr
		if tr.Outcome != results.OutcomeCompleted && tr.Outcome != results.OutcomePruned {
			t.Errorf("trial %s: %s (%s), want completed or pruned", tr.TrialID, tr.Outcome, tr.Error)
		}
	}
	for _, id := range []string{"0-s1", "0-s2"} {
		if tr := byID[id]; tr.Outcome != results.OutcomeCompleted || tr.Steps != 36000 {
			t.Errorf("trial %s of the best configuration: %s at step %d, want completed at 36000", id, tr.Outcome, tr.Steps)
		}
	}
	log, err := sweepstore.New(e.s3).ReadDecisionsParts(context.Background(), sweepID)
	if err != nil {
		t.Fatal(err)
	}
	stops := map[string]int{}
	var stored []string
	for i, d := range log {
		if d.Seq != i {
			t.Errorf("decision %d has seq %d", i, d.Seq)
		}
		stops[d.TrialID]++
		stored = append(stored, d.TrialID+" "+d.Action+" "+d.Reason)
		if tr := byID[d.TrialID]; tr.Outcome != results.OutcomePruned || tr.Pruning == nil || tr.Pruning.Rung != d.Pruning.Rung {
			t.Errorf("decision %d (%s at rung %d) does not match trial %s: %s, pruning %+v", d.Seq, d.Action, d.Pruning.Rung, d.TrialID, tr.Outcome, tr.Pruning)
		}
	}
	pruned := 0
	for id, tr := range byID {
		want := 0
		if tr.Outcome == results.OutcomePruned {
			want = 1
			pruned++
		}
		if stops[id] != want {
			t.Errorf("trial %s (%s): %d stops in the decision log, want %d", id, tr.Outcome, stops[id], want)
		}
	}
	sameDecisions(t, stored, sent)
	t.Logf("%d trials pruned, %d decisions logged, %d distinct decisions sent", pruned, len(log), len(sent))
	if pruned == 0 {
		t.Errorf("no trial pruned: the scenario tests nothing")
	}
}

// sameDecisions checks that the stored decision log ("trial action reason" per decision) holds exactly
// the decisions the sweep sent.
func sameDecisions(t *testing.T, stored, sent []string) {
	t.Helper()
	sort.Strings(stored)
	if strings.Join(stored, "\n") != strings.Join(sent, "\n") {
		t.Errorf("the stored decision log and the decisions the sweep sent differ:\nstored:\n%s\nsent:\n%s",
			strings.Join(stored, "\n"), strings.Join(sent, "\n"))
	}
}

// adaptiveSweepUnderFaults submits spec (after the scripted trainer's command) with a 5 s heartbeat
// timeout on two workers of slots each and a store in MinIO, SIGKILLs worker a once two of its trainers
// have a checkpoint, SIGKILLs the dev server 2 s later and starts it again 5 s after, and waits for the
// sweep. It returns the env (closed), the sweep's ID and the decisions its workflow runs sent.
func adaptiveSweepUnderFaults(t *testing.T, name string, slots int, spec string) (*s3Env, string, []string) {
	t.Helper()
	e, srv := newKillableS3Env(t, name)
	f := &faultInjector{t: t, e: e.env, srv: srv, minio: e.minio}
	a := e.startWorker("a", "--slots", fmt.Sprint(slots))
	e.startWorker("b", "--slots", fmt.Sprint(slots))
	// A grace period that fits in the 5 s heartbeat timeout (sweeps.CheckGracePeriod).
	sweepID := e.submit(e.spec(name, "\n  grace_period: 1s"+spec), "--heartbeat-timeout", "5s")
	if !e.waitTrainers(sweepID, a, 2) {
		t.Fatal("sweep ended before its trainers ran on worker a")
	}
	_ = a.Process.Signal(syscall.SIGKILL)
	_ = a.Wait()
	t.Logf("worker a SIGKILLed")
	f.run([]fault{{at: 2 * time.Second, kind: serverKill, dur: 5 * time.Second}})
	waitSweepOrDump(t, e.env, sweepID, 5*time.Minute)
	sent := sentDecisions(t, e.env, sweepID)
	e.close()
	return e, sweepID, sent
}

// sentDecisions returns the distinct stop and exploit decisions every run of the sweep's workflow
// signalled to its trials, as "trial action reason", sorted.
func sentDecisions(t *testing.T, e *env, sweepID string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range e.sweepRuns(t, sweepID, false) {
		for _, ev := range r.events {
			a := ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes()
			if a == nil || (a.SignalName != workflows.SignalSegmentDecision && a.SignalName != workflows.SignalStopTrial) {
				continue
			}
			var d scheduler.Decision
			if err := converter.GetDefaultDataConverter().FromPayloads(a.Input, &d); err != nil {
				t.Fatalf("decode a %s signal: %v", a.SignalName, err)
			}
			if d.Action != scheduler.Stop && d.Action != scheduler.Exploit {
				continue
			}
			trial := strings.TrimPrefix(a.WorkflowExecution.WorkflowId, sweepID+"/trial/")
			seen[trial+" "+string(d.Action)+" "+d.Reason] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestChaosPBTSweep: a pbt sweep of the scripted trainer on two workers while one worker is
// SIGKILLed and the dev server is SIGKILLed and restarted. The sweep completes with every member
// recorded once and none failed; each member's exploits in results.json are the exploit decisions of
// the stored decision log (one each, none twice), each with its record and its copy of the source's
// checkpoint in the store; and the log holds exactly the decisions the sweep's workflow runs sent.
func TestChaosPBTSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault scenario of about a minute")
	}
	// 6 members, records of 1,000 steps, 2.5 a second, a checkpoint at each; ready every 4,000 steps.
	// The scripted trainer's reward plateau grows as lr nears 1e-3.
	e, sweepID, sent := adaptiveSweepUnderFaults(t, "chaospbt", 3, `
  total_steps: 24000
method: pbt
sampler_seed: 3
seeds: [1]
parameters:
  lr: {min: 1.0e-5, max: 1.0e-1, distribution: log_uniform}
  sleep_ms: {value: 400}
  checkpoint_every: {value: 1}
pbt: {population: 6, ready_steps: 4000}
probes: {enabled: false}
concurrency: 6
`)

	res := e.results(sweepID)
	byID := map[string]results.TrialSummary{}
	exploits := map[string]int{}
	for _, tr := range res.Trials {
		if _, dup := byID[tr.TrialID]; dup {
			t.Errorf("member %s recorded twice", tr.TrialID)
		}
		byID[tr.TrialID] = tr
		if tr.Outcome != results.OutcomeCompleted || tr.Steps < 24000 {
			t.Errorf("member %s: %s at step %d (%s), want completed at 24000", tr.TrialID, tr.Outcome, tr.Steps, tr.Error)
		}
		for _, x := range tr.Exploits {
			exploits[tr.TrialID]++
			if rec, err := sweepstore.New(e.s3).ReadExploit(context.Background(), sweepID, tr.TrialID, x.Step); err != nil || rec.From != x.From {
				t.Errorf("member %s's exploit at step %d: record %+v (%v), want one from %s", tr.TrialID, x.Step, rec, err, x.From)
			}
			if keys, err := e.s3.List(context.Background(), x.Checkpoint); err != nil || len(keys) == 0 || keys[0] != x.Checkpoint {
				t.Errorf("member %s's copy of the exploited checkpoint %s: %v, %v", tr.TrialID, x.Checkpoint, keys, err)
			}
		}
	}
	if len(res.Trials) < 6 {
		t.Fatalf("results.json has %d members, want 6", len(res.Trials))
	}
	log, err := sweepstore.New(e.s3).ReadDecisionsParts(context.Background(), sweepID)
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]int{}
	var stored []string
	for i, d := range log {
		if d.Seq != i || d.Action != string(scheduler.Exploit) {
			t.Errorf("decision %d: seq %d, action %s; want seq %d, an exploit", i, d.Seq, d.Action, i)
		}
		logged[d.TrialID]++
		stored = append(stored, d.TrialID+" "+d.Action+" "+d.Reason)
	}
	total := 0
	for id := range byID {
		total += exploits[id]
		if logged[id] != exploits[id] {
			t.Errorf("member %s: %d exploits in results.json, %d in the decision log", id, exploits[id], logged[id])
		}
	}
	sameDecisions(t, stored, sent)
	t.Logf("%d exploits, %d decisions logged, %d distinct decisions sent", total, len(log), len(sent))
	if total == 0 {
		t.Errorf("no exploit: the scenario tests nothing")
	}
}
